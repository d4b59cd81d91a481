//! Storage images and texel buffers on the device: the `VkFormat` of each texel format the model
//! runs, and creating, filling and reading back the image or buffer view a descriptor binds. An
//! image's bytes are laid out as [`crate::words::texel`] lays them out (tightly packed texels, x
//! fastest), which is the layout `vkCmdCopyBufferToImage` reads with a zero row length.

use crate::vulkan::{Context, VkError};
use crate::words::texel::{Extent, TexelFormat};
use std::sync::Arc;
use vulkano::buffer::view::{BufferView, BufferViewCreateInfo};
use vulkano::buffer::{BufferUsage, Subbuffer};
use vulkano::command_buffer::{
    AutoCommandBufferBuilder, CopyBufferInfo, CopyBufferToImageInfo, CopyImageToBufferInfo,
    PrimaryAutoCommandBuffer,
};
use vulkano::format::Format;
use vulkano::image::view::{ImageView, ImageViewCreateInfo, ImageViewType};
use vulkano::image::{Image, ImageCreateInfo, ImageType, ImageUsage, SampleCount};
use vulkano::memory::allocator::AllocationCreateInfo;
use vulkano::Validated;

/// What a storage image binding needs beyond its bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct ImageBinding {
    /// the texel format
    pub format: TexelFormat,
    /// its extent (depth: layers of an arrayed image)
    pub extent: Extent,
    /// 1, 2 or 3 dimensions
    pub dims: u8,
    /// an array of layers (1D or 2D)
    pub arrayed: bool,
}

/// The `VkFormat` of a texel format.
pub fn vk_format(f: &TexelFormat) -> Option<Format> {
    use Format as V;
    Some(match f.vk {
        "R32G32B32A32_SFLOAT" => V::R32G32B32A32_SFLOAT,
        "B10G11R11_UFLOAT_PACK32" => V::B10G11R11_UFLOAT_PACK32,
        "R16G16B16A16_SFLOAT" => V::R16G16B16A16_SFLOAT,
        "R32_SFLOAT" => V::R32_SFLOAT,
        "R32G32_SFLOAT" => V::R32G32_SFLOAT,
        "R16G16_SFLOAT" => V::R16G16_SFLOAT,
        "R16_SFLOAT" => V::R16_SFLOAT,
        "R8G8B8A8_UNORM" => V::R8G8B8A8_UNORM,
        "R8G8B8A8_SNORM" => V::R8G8B8A8_SNORM,
        "R16G16B16A16_UNORM" => V::R16G16B16A16_UNORM,
        "R16G16_UNORM" => V::R16G16_UNORM,
        "R8G8_UNORM" => V::R8G8_UNORM,
        "R16_UNORM" => V::R16_UNORM,
        "R8_UNORM" => V::R8_UNORM,
        "R16G16B16A16_SNORM" => V::R16G16B16A16_SNORM,
        "R16G16_SNORM" => V::R16G16_SNORM,
        "R8G8_SNORM" => V::R8G8_SNORM,
        "R16_SNORM" => V::R16_SNORM,
        "R8_SNORM" => V::R8_SNORM,
        "R32G32B32A32_SINT" => V::R32G32B32A32_SINT,
        "R16G16B16A16_SINT" => V::R16G16B16A16_SINT,
        "R8G8B8A8_SINT" => V::R8G8B8A8_SINT,
        "R32_SINT" => V::R32_SINT,
        "R32G32_SINT" => V::R32G32_SINT,
        "R16G16_SINT" => V::R16G16_SINT,
        "R8G8_SINT" => V::R8G8_SINT,
        "R16_SINT" => V::R16_SINT,
        "R8_SINT" => V::R8_SINT,
        "R32G32B32A32_UINT" => V::R32G32B32A32_UINT,
        "R16G16B16A16_UINT" => V::R16G16B16A16_UINT,
        "R8G8B8A8_UINT" => V::R8G8B8A8_UINT,
        "R32_UINT" => V::R32_UINT,
        "R32G32_UINT" => V::R32G32_UINT,
        "R16G16_UINT" => V::R16G16_UINT,
        "R8G8_UINT" => V::R8G8_UINT,
        "R16_UINT" => V::R16_UINT,
        "R8_UINT" => V::R8_UINT,
        "R64_UINT" => V::R64_UINT,
        "R64_SINT" => V::R64_SINT,
        "A2B10G10R10_UNORM_PACK32" => V::A2B10G10R10_UNORM_PACK32,
        "A2B10G10R10_UINT_PACK32" => V::A2B10G10R10_UINT_PACK32,
        _ => return None,
    })
}

/// A binding's resource on the device.
pub(crate) enum Bound {
    /// a storage or uniform buffer
    Buffer(Subbuffer<[u8]>),
    /// an image and its view (with its sampler: a combined image sampler)
    Image(
        (Arc<Image>, Arc<ImageView>),
        crate::vulkan::ImageBinding,
        Option<Arc<vulkano::image::sampler::Sampler>>,
    ),
    /// a sampler
    Sampler(Arc<vulkano::image::sampler::Sampler>),
    /// a texel buffer and its view
    Texel(Subbuffer<[u8]>, Arc<BufferView>),
}

impl Bound {
    /// Records the copy between the staging buffer and this resource: to the device (`up`) or
    /// back. A multisampled image has neither (Vulkan copies only single-sample images to and
    /// from buffers): it starts undefined and is not read back.
    pub(crate) fn copy(
        &self,
        cb: &mut AutoCommandBufferBuilder<PrimaryAutoCommandBuffer>,
        stage: &Subbuffer<[u8]>,
        up: bool,
    ) -> Result<(), VkError> {
        match self {
            Bound::Buffer(dev) | Bound::Texel(dev, _) => {
                let (from, to) = if up { (stage, dev) } else { (dev, stage) };
                cb.copy_buffer(CopyBufferInfo::buffers(from.clone(), to.clone()))
                    .map(|_| ())
                    .map_err(|e| VkError::vk("recording a buffer copy", e))
            }
            Bound::Image((img, _), ib, _) if ib.extent.samples == 1 => if up {
                cb.copy_buffer_to_image(CopyBufferToImageInfo::buffer_image(
                    stage.clone(),
                    img.clone(),
                ))
                .map(|_| ())
            } else {
                cb.copy_image_to_buffer(CopyImageToBufferInfo::image_buffer(
                    img.clone(),
                    stage.clone(),
                ))
                .map(|_| ())
            }
            .map_err(|e| VkError::vk("recording an image copy", e)),
            Bound::Image(..) | Bound::Sampler(_) => Ok(()),
        }
    }
}

pub(crate) fn e_samples(s: SampleCount) -> u32 {
    s as u32
}

fn unsupported(what: impl Into<String>) -> VkError {
    VkError::Unsupported(what.into())
}

fn input(what: impl Into<String>) -> VkError {
    VkError::Input(what.into())
}

impl Context {
    /// An image and its view, of `ib`'s format and extent, for use as a storage image
    /// (`storage`) and through a sampler (`sampled`).
    pub(crate) fn device_image(
        &self,
        ib: &crate::vulkan::ImageBinding,
        storage: bool,
        sampled: bool,
    ) -> Result<(Arc<Image>, Arc<ImageView>), VkError> {
        let format = crate::vulkan::vk_format(&ib.format)
            .ok_or_else(|| unsupported(format!("images of format {}", ib.format.vk)))?;
        let e = ib.extent;
        let (image_type, extent, layers) = match (ib.dims, ib.arrayed) {
            (1, false) => (ImageType::Dim1d, [e.width, 1, 1], 1),
            (1, true) => (ImageType::Dim1d, [e.width, 1, 1], e.depth),
            (2, true) => (ImageType::Dim2d, [e.width, e.height, 1], e.depth),
            (3, _) => (ImageType::Dim3d, [e.width, e.height, e.depth], 1),
            _ => (ImageType::Dim2d, [e.width, e.height, 1], 1),
        };
        let samples = match e.samples {
            1 => SampleCount::Sample1,
            2 => SampleCount::Sample2,
            4 => SampleCount::Sample4,
            8 => SampleCount::Sample8,
            16 => SampleCount::Sample16,
            32 => SampleCount::Sample32,
            64 => SampleCount::Sample64,
            n => {
                return Err(input(format!(
                    "{n} samples per texel (1 to 64, a power of two)"
                )))
            }
        };
        let mut usage = ImageUsage::empty();
        if storage {
            usage |= ImageUsage::STORAGE;
        }
        if sampled {
            usage |= ImageUsage::SAMPLED;
        }
        if e.samples == 1 {
            usage |= ImageUsage::TRANSFER_SRC | ImageUsage::TRANSFER_DST;
        }
        let img = Image::new(
            self.memory.clone(),
            ImageCreateInfo {
                image_type,
                format,
                extent,
                array_layers: layers,
                samples,
                usage,
                ..Default::default()
            },
            AllocationCreateInfo::default(),
        )
        .map_err(|e| match e {
            Validated::ValidationError(v) => unsupported(format!(
                "a {:?} storage image of {} with {} samples: {v}",
                image_type,
                ib.format.vk,
                e_samples(samples)
            )),
            e => VkError::vk("creating an image", format!("{e:?}")),
        })?;
        let view_type = match (ib.dims, ib.arrayed) {
            (1, false) => ImageViewType::Dim1d,
            (1, true) => ImageViewType::Dim1dArray,
            (2, true) => ImageViewType::Dim2dArray,
            (3, _) => ImageViewType::Dim3d,
            _ => ImageViewType::Dim2d,
        };
        let view = ImageView::new(
            img.clone(),
            ImageViewCreateInfo {
                view_type,
                ..ImageViewCreateInfo::from_image(&img)
            },
        )
        .map_err(|e| {
            VkError::vk(
                "creating an image view",
                crate::vulkan::context::format_validated(e),
            )
        })?;
        Ok((img, view))
    }

    /// A sampler of state `s`.
    pub(crate) fn sampler(
        &self,
        s: &crate::words::sampler::Sampler,
    ) -> Result<Arc<vulkano::image::sampler::Sampler>, VkError> {
        use crate::words::sampler::{AddressMode as A, BorderColor as B, Filter as F};
        use vulkano::image::sampler::{
            BorderColor, Filter, Sampler, SamplerAddressMode, SamplerCreateInfo, SamplerMipmapMode,
        };
        let filter = |f: F| match f {
            F::Nearest => Filter::Nearest,
            F::Linear => Filter::Linear,
        };
        let mode = |m: A| match m {
            A::Repeat => SamplerAddressMode::Repeat,
            A::MirroredRepeat => SamplerAddressMode::MirroredRepeat,
            A::ClampToEdge => SamplerAddressMode::ClampToEdge,
            A::ClampToBorder => SamplerAddressMode::ClampToBorder,
            A::MirrorClampToEdge => SamplerAddressMode::MirrorClampToEdge,
        };
        let border = match s.border {
            B::FloatTransparentBlack => BorderColor::FloatTransparentBlack,
            B::IntTransparentBlack => BorderColor::IntTransparentBlack,
            B::FloatOpaqueBlack => BorderColor::FloatOpaqueBlack,
            B::IntOpaqueBlack => BorderColor::IntOpaqueBlack,
            B::FloatOpaqueWhite => BorderColor::FloatOpaqueWhite,
            B::IntOpaqueWhite => BorderColor::IntOpaqueWhite,
        };
        Sampler::new(
            self.device.clone(),
            SamplerCreateInfo {
                mag_filter: filter(s.mag),
                min_filter: filter(s.min),
                mipmap_mode: SamplerMipmapMode::Nearest,
                address_mode: s.address.map(mode),
                border_color: border,
                unnormalized_coordinates: s.unnormalized,
                lod: s.min_lod..=s.max_lod,
                ..Default::default()
            },
        )
        .map_err(|e| match e {
            Validated::ValidationError(v) => unsupported(format!("a sampler ({s}): {v}")),
            e => VkError::vk("creating a sampler", format!("{e:?}")),
        })
    }

    /// A texel buffer of `len` bytes and its view of format `f` (a storage and uniform buffer
    /// too where `plain`: one memory behind descriptors of both kinds).
    pub(crate) fn texel_buffer(
        &self,
        f: &crate::words::texel::TexelFormat,
        len: u64,
        plain: bool,
    ) -> Result<(Subbuffer<[u8]>, Arc<BufferView>), VkError> {
        let mut usage = BufferUsage::STORAGE_TEXEL_BUFFER | BufferUsage::UNIFORM_TEXEL_BUFFER;
        if plain {
            usage |= BufferUsage::STORAGE_BUFFER | BufferUsage::UNIFORM_BUFFER;
        }
        let buf = self.device_slice::<u8>(len, usage, "allocating a texel buffer")?;
        let view = self.texel_view(f, &buf)?;
        Ok((buf, view))
    }

    /// A view of format `f` of texel buffer memory `buf`.
    pub(crate) fn texel_view(
        &self,
        f: &crate::words::texel::TexelFormat,
        buf: &Subbuffer<[u8]>,
    ) -> Result<Arc<BufferView>, VkError> {
        let format = crate::vulkan::vk_format(f)
            .ok_or_else(|| unsupported(format!("texel buffers of format {}", f.vk)))?;
        let view = BufferView::new(
            buf.clone(),
            BufferViewCreateInfo {
                format,
                ..Default::default()
            },
        )
        .map_err(|e| match e {
            Validated::ValidationError(v) => {
                unsupported(format!("a texel buffer of format {}: {v}", f.vk))
            }
            e => VkError::vk("creating a buffer view", format!("{e:?}")),
        })?;
        Ok(view)
    }
}

#[cfg(test)]
mod tests {
    /// Every format the model runs has a `VkFormat` of the same name, with texels of the same size.
    #[test]
    fn every_modelled_format_has_its_vkformat() {
        for (_, f) in crate::words::texel::FORMATS {
            let v = super::vk_format(f).unwrap_or_else(|| panic!("{}", f.vk));
            assert_eq!(format!("{v:?}"), f.vk);
            assert_eq!(v.block_size(), f.texel_bytes() as u64, "{}", f.vk);
        }
    }
}
