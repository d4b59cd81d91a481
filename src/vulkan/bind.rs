//! Binding a module dispatch's memory on the device: one resource per group of descriptors that
//! share memory (buffers, texel buffers, images, samplers), with every usage its descriptors
//! need, and the descriptor writes of each set — plain descriptors, arrays in element order,
//! views of part of a shared buffer.

use crate::vulkan::images::Bound;
use crate::vulkan::module::{input, DescriptorKind, ModuleDispatch};
use crate::vulkan::{Context, VkError};
use crate::words::address::Place;
use std::collections::HashMap;
use vulkano::buffer::Subbuffer;
use vulkano::descriptor_set::WriteDescriptorSet;

/// A binding's bytes of its memory, by its index among the dispatch's buffers.
pub(crate) type Views = HashMap<usize, std::ops::Range<u64>>;

/// (index into the dispatch's buffers, staging buffer, device resource).
pub(crate) type Resource = (usize, Subbuffer<[u8]>, Bound);

impl Context {
    /// The staging buffer and device resource of every binding the entry point `used` and every
    /// buffer whose address the dispatch is given (`addressed`); a binding of a group that
    /// shares memory shares its group's resource. With each binding's view of its memory.
    pub(crate) fn bind_resources(
        &self,
        d: &ModuleDispatch,
        used: &dyn Fn(u32, u32) -> bool,
        addressed: &[Place],
    ) -> Result<(Vec<Resource>, Views), VkError> {
        // (index into d.buffers, staging, device resource) for every binding the entry point uses,
        // and every buffer whose address the dispatch is given.
        let mut bound: Vec<(usize, Subbuffer<[u8]>, Bound)> = Vec::new();
        // Per binding, the bytes of its memory its descriptor sees (a view of a shared buffer).
        let mut views: HashMap<usize, std::ops::Range<u64>> = HashMap::new();
        for (i, b) in d.buffers.iter().enumerate() {
            let has_address = addressed.contains(&Place::Bound(i));
            if !used(b.set, b.binding) && !has_address {
                continue;
            }
            // One memory behind several descriptors: the group of the binding that owns it (its
            // bytes are the memory's, whether or not the shader uses that binding).
            let root = b.alias_of.filter(|j| *j < i).unwrap_or(i);
            let memory = &d.buffers[root];
            if let Some(v) = &b.view {
                if v.start > v.end || v.end > memory.data.len() {
                    return Err(input(format!(
                        "binding {}.{}: its view {}..{} lies outside its {}-byte buffer",
                        b.set,
                        b.binding,
                        v.start,
                        v.end,
                        memory.data.len()
                    )));
                }
                views.insert(i, v.start as u64..v.end as u64);
            }
            // The group's resource, made by an earlier binding of it: this one shares it.
            if let Some(k) = bound.iter().position(|(x, _, _)| {
                d.buffers[*x].alias_of.filter(|j| *j < *x).unwrap_or(*x) == root
            }) {
                let shared: Bound = match &bound[k].2 {
                    Bound::Buffer(dev) => Bound::Buffer(dev.clone()),
                    Bound::Texel(buf, view) => Bound::Texel(buf.clone(), view.clone()),
                    // the same image, with this descriptor's own sampler (if it has one)
                    Bound::Image(iv, ib, _) => Bound::Image(
                        iv.clone(),
                        *ib,
                        match b.kind {
                            DescriptorKind::CombinedImageSampler(_, smp) => {
                                Some(self.sampler(&smp)?)
                            }
                            _ => None,
                        },
                    ),
                    Bound::Sampler(smp) => Bound::Sampler(smp.clone()),
                };
                bound.push((i, bound[k].1.clone(), shared));
                continue;
            }
            // (a sampler has no bytes: a one-byte staging buffer that is never copied)
            let data = &memory.data;
            let stage = self.staging(if data.is_empty() { &[0] } else { data })?;
            // A resource's usage: every kind of descriptor of its group.
            let (mut storage, mut sampled, mut texel, mut plain) = (false, false, false, false);
            for (_, x) in d
                .buffers
                .iter()
                .enumerate()
                .filter(|(j, x)| *j == root || x.alias_of == Some(root))
            {
                match x.kind {
                    DescriptorKind::StorageImage(_) => storage = true,
                    DescriptorKind::SampledImage(_) | DescriptorKind::CombinedImageSampler(..) => {
                        sampled = true
                    }
                    DescriptorKind::StorageTexelBuffer(_)
                    | DescriptorKind::UniformTexelBuffer(_) => texel = true,
                    DescriptorKind::Storage | DescriptorKind::Uniform => plain = true,
                    DescriptorKind::Sampler(_) => {}
                }
            }
            let res = match b.kind {
                DescriptorKind::StorageImage(ib) | DescriptorKind::SampledImage(ib) => {
                    Bound::Image(self.device_image(&ib, storage, sampled)?, ib, None)
                }
                DescriptorKind::CombinedImageSampler(ib, smp) => Bound::Image(
                    self.device_image(&ib, storage, sampled)?,
                    ib,
                    Some(self.sampler(&smp)?),
                ),
                DescriptorKind::Sampler(smp) => Bound::Sampler(self.sampler(&smp)?),
                DescriptorKind::StorageTexelBuffer(f) | DescriptorKind::UniformTexelBuffer(f) => {
                    let (buf, view) = self.texel_buffer(&f, data.len() as u64, plain)?;
                    Bound::Texel(buf, view)
                }
                DescriptorKind::Storage | DescriptorKind::Uniform => {
                    Bound::Buffer(self.module_buffer(data.len() as u64, has_address, texel)?)
                }
            };
            bound.push((i, stage, res));
        }
        Ok((bound, views))
    }

    /// The descriptor writes of descriptor set `set`: one per binding, a plain descriptor or an
    /// array's elements in order (texel views over part of a shared buffer made here).
    pub(crate) fn descriptor_writes(
        &self,
        d: &ModuleDispatch,
        bound: &[Resource],
        views: &Views,
        used: &dyn Fn(u32, u32) -> bool,
        set: u32,
    ) -> Result<Vec<WriteDescriptorSet>, VkError> {
        // One write per binding: a plain descriptor, or an array's elements in order.
        type Elements = Vec<(u32, Subbuffer<[u8]>)>;
        let mut by_binding: std::collections::BTreeMap<u32, Elements> = Default::default();
        let mut others = Vec::new();
        for (i, _, dev) in bound.iter().filter(|(i, _, _)| {
            d.buffers
                .get(*i)
                .is_some_and(|b| b.set == set && used(b.set, b.binding))
        }) {
            let b = &d.buffers[*i];
            // The bytes this descriptor sees, of its group's memory.
            let seen = |buf: &Subbuffer<[u8]>| match views.get(i) {
                Some(v) => buf.clone().slice(v.clone()),
                None => buf.clone(),
            };
            let texel_format = match b.kind {
                DescriptorKind::StorageTexelBuffer(f) | DescriptorKind::UniformTexelBuffer(f) => {
                    Some(f)
                }
                _ => None,
            };
            match (dev, texel_format) {
                // a texel-buffer descriptor over memory another kind owns, or over part of it
                (Bound::Buffer(buf), Some(f)) => {
                    others.push(WriteDescriptorSet::buffer_view_array(
                        b.binding,
                        b.element,
                        [self.texel_view(&f, &seen(buf)).map_err(|e| match e {
                            VkError::Unsupported(m) => {
                                input(format!("binding {}.{}: {m}", b.set, b.binding))
                            }
                            e => e,
                        })?],
                    ))
                }
                (Bound::Texel(buf, _), Some(f)) if views.contains_key(i) => {
                    others.push(WriteDescriptorSet::buffer_view_array(
                        b.binding,
                        b.element,
                        [self.texel_view(&f, &seen(buf))?],
                    ))
                }
                (Bound::Texel(buf, _), None) | (Bound::Buffer(buf), None) => by_binding
                    .entry(b.binding)
                    .or_default()
                    .push((b.element, seen(buf))),
                (dev, _) => match dev {
                    Bound::Buffer(_) => unreachable!("matched above"),
                    Bound::Image((_, view), _, None) => others.push(
                        WriteDescriptorSet::image_view_array(b.binding, b.element, [view.clone()]),
                    ),
                    Bound::Image((_, view), _, Some(smp)) => {
                        others.push(WriteDescriptorSet::image_view_sampler_array(
                            b.binding,
                            b.element,
                            [(view.clone(), smp.clone())],
                        ))
                    }
                    Bound::Sampler(smp) => others.push(WriteDescriptorSet::sampler_array(
                        b.binding,
                        b.element,
                        [smp.clone()],
                    )),
                    Bound::Texel(_, view) => others.push(WriteDescriptorSet::buffer_view_array(
                        b.binding,
                        b.element,
                        [view.clone()],
                    )),
                },
            }
        }
        Ok(by_binding
            .into_iter()
            .map(|(binding, mut devs)| {
                devs.sort_by_key(|(e, _)| *e);
                if devs.len() == 1 && devs[0].0 == 0 {
                    WriteDescriptorSet::buffer(binding, devs.remove(0).1)
                } else {
                    WriteDescriptorSet::buffer_array(binding, 0, devs.into_iter().map(|(_, d)| d))
                }
            })
            .chain(others)
            .collect())
    }
}
