//! What a run leaves behind: pictures of V through a perceptual colormap, and the final U and V as
//! `.npy` files for numpy users.

use ndarray::Array2;
use std::path::{Path, PathBuf};

/// A file that could not be written, with its path.
#[derive(Debug, thiserror::Error)]
#[error("cannot write {path}: {why}")]
pub struct OutputError {
    /// the file or directory
    pub path: PathBuf,
    /// the operating system's or encoder's message
    pub why: String,
}

fn fail(path: &Path, why: impl std::fmt::Display) -> OutputError {
    OutputError {
        path: path.to_path_buf(),
        why: why.to_string(),
    }
}

/// Creates `dir` if needed and proves it writable by creating and removing a probe file, so that a
/// run fails before any work rather than after it.
pub fn check_writable(dir: &Path) -> Result<(), OutputError> {
    std::fs::create_dir_all(dir).map_err(|e| fail(dir, e))?;
    let probe = dir.join(".lockstep-write-probe");
    std::fs::write(&probe, b"").map_err(|e| fail(dir, e))?;
    std::fs::remove_file(&probe).map_err(|e| fail(&probe, e))
}

/// The colormap as 256 entries (inferno: perceptually uniform, readable in grey scale).
pub(crate) fn colormap() -> [[u8; 3]; 256] {
    let mut lut = [[0u8; 3]; 256];
    for (i, c) in lut.iter_mut().enumerate() {
        *c = colorous::INFERNO.eval_rational(i, 256).into_array();
    }
    lut
}

/// The V concentration shown at the top of the colormap. After the first few dozen steps V stays
/// below ~0.5 (it peaks at 1 only in the initial square), so a fixed [0, 0.5] scale uses the whole
/// colormap while keeping successive frames comparable; higher values are clamped.
pub const V_SCALE_MAX: f32 = 0.5;

/// V as an RGB picture, on the fixed scale [0, [`V_SCALE_MAX`]].
///
/// ```
/// use lockstep::grayscott::output::v_image;
/// let v = ndarray::Array2::from_shape_vec((1, 3), vec![0.0f32, 0.25, 0.5]).unwrap();
/// let img = v_image(&v);
/// assert_eq!((img.width(), img.height()), (3, 1));
/// assert_ne!(img.get_pixel(0, 0), img.get_pixel(2, 0));
/// ```
pub fn v_image(v: &Array2<f32>) -> image::RgbImage {
    let lut = colormap();
    let (rows, cols) = v.dim();
    let mut buf = Vec::with_capacity(rows * cols * 3);
    for &x in v.iter() {
        // NaN maps to 0 (`as` saturates and sends NaN to 0).
        let i = ((x / V_SCALE_MAX).clamp(0.0, 1.0) * 255.0 + 0.5) as usize;
        buf.extend_from_slice(&lut[i.min(255)]);
    }
    image::RgbImage::from_raw(cols as u32, rows as u32, buf).unwrap_or_default()
}

/// Writes V as `dir/v-NNNN.png`.
pub(crate) fn write_v_png(dir: &Path, index: u32, v: &Array2<f32>) -> Result<PathBuf, OutputError> {
    let path = dir.join(format!("v-{index:04}.png"));
    v_image(v)
        .save_with_format(&path, image::ImageFormat::Png)
        .map_err(|e| fail(&path, e))?;
    Ok(path)
}

/// Writes `dir/u-final.npy` and `dir/v-final.npy` (rows × cols, little-endian f32).
pub(crate) fn write_final(dir: &Path, u: &Array2<f32>, v: &Array2<f32>) -> Result<(), OutputError> {
    for (name, a) in [("u-final.npy", u), ("v-final.npy", v)] {
        let path = dir.join(name);
        ndarray_npy::write_npy(&path, a).map_err(|e| fail(&path, e))?;
    }
    Ok(())
}
