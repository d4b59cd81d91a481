//! Device addresses the host writes into buffers and push constants, for modules that reach
//! memory through `PhysicalStorageBuffer` pointers (GL_EXT_buffer_reference): where each address
//! goes and which buffer it is the address of. Shared by the kernel runner (which reads them from
//! the user's buffer specs), the device runner (which learns the real addresses from the driver,
//! `vkGetBufferDeviceAddress`) and the model (which uses the device's addresses, or its own).
//!
//! Vulkan-free: the device side and the model patch bytes the same way.

/// A buffer of a dispatch.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Place {
    /// the `i`-th bound buffer (descriptor) of the dispatch
    Bound(usize),
    /// the `i`-th buffer with no descriptor, reached only through its address
    Unbound(usize),
    /// the push constants (which can hold addresses, but have none)
    Push,
}

/// How much of the address a patch writes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Width {
    /// all 64 bits (a `uint64_t` or a buffer reference)
    Full,
    /// the low 32 bits (the `x` of a `uvec2` address)
    Low,
    /// the high 32 bits (its `y`)
    High,
}

impl Width {
    /// Bytes written.
    pub fn bytes(self) -> usize {
        match self {
            Width::Full => 8,
            Width::Low | Width::High => 4,
        }
    }
}

/// "Write the address of buffer `of`, plus `plus` bytes, at byte `at` of buffer `into`."
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AddressPatch {
    /// the buffer written
    pub into: Place,
    /// the byte written at
    pub at: usize,
    /// the buffer whose address is written
    pub of: Place,
    /// bytes added to its base address
    pub plus: u64,
    /// how much of the address
    pub width: Width,
}

/// The buffers whose addresses the patches write, each once, in order.
pub(crate) fn addressed(patches: &[AddressPatch]) -> Vec<Place> {
    let mut v: Vec<Place> = patches.iter().map(|p| p.of).collect();
    v.sort();
    v.dedup();
    v
}

/// Writes into `bytes` (the contents of `into`) every patch aimed at it, with `base(of)` the base
/// address of each buffer addressed. A patch outside the bytes, or of a buffer without an
/// address, is an error naming it.
pub fn apply(
    patches: &[AddressPatch],
    into: Place,
    bytes: &mut [u8],
    base: &dyn Fn(Place) -> Option<u64>,
) -> Result<(), String> {
    for p in patches.iter().filter(|p| p.into == into) {
        let b = base(p.of).ok_or_else(|| format!("{:?} has no device address", p.of))?;
        let a = b.wrapping_add(p.plus);
        let le = a.to_le_bytes();
        let src = match p.width {
            Width::Full => &le[..],
            Width::Low => &le[..4],
            Width::High => &le[4..],
        };
        let (end, len) = (p.at + src.len(), bytes.len());
        let dst = bytes.get_mut(p.at..end).ok_or_else(|| {
            format!(
                "an address at bytes {}..{end} of a buffer of {len} bytes",
                p.at
            )
        })?;
        dst.copy_from_slice(src);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn patches_write_full_and_half_addresses_little_endian() {
        let patches = [
            AddressPatch {
                into: Place::Push,
                at: 0,
                of: Place::Unbound(0),
                plus: 16,
                width: Width::Full,
            },
            AddressPatch {
                into: Place::Push,
                at: 8,
                of: Place::Bound(1),
                plus: 0,
                width: Width::High,
            },
        ];
        let mut b = [0u8; 12];
        let base = |p: Place| match p {
            Place::Unbound(0) => Some(0x1_0000_0000),
            Place::Bound(1) => Some(0x2_0000_0040),
            _ => None,
        };
        apply(&patches, Place::Push, &mut b, &base).unwrap();
        assert_eq!(
            u64::from_le_bytes(b[..8].try_into().unwrap()),
            0x1_0000_0010
        );
        assert_eq!(u32::from_le_bytes(b[8..].try_into().unwrap()), 2);
        assert_eq!(
            addressed(&patches),
            vec![Place::Bound(1), Place::Unbound(0)]
        );
        let mut short = [0u8; 4];
        assert!(apply(&patches, Place::Push, &mut short, &base).is_err());
    }
}
