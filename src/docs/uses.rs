//! Short GLSL uses of each category, quoted from the source documents (re-indented), or — for
//! rotate, which has no GLSL example in its sources — written for these docs and marked so.

use crate::model::Category;

/// A GLSL snippet with where it comes from.
pub struct GlslUse {
    /// Heading.
    pub title: &'static str,
    /// Where it comes from.
    pub source: &'static str,
    /// What to notice, in terms of the tables above it.
    pub comment: &'static str,
    /// The GLSL.
    pub code: &'static str,
}

const TUTORIAL: &str = "Khronos, *Vulkan Subgroup Tutorial* (Neil Henning)";

/// The uses shown on a category's page.
pub fn uses(category: Category) -> Vec<GlslUse> {
    match category {
        Category::Basic => vec![GlslUse {
            title: "Load once per subgroup: subgroupElect, then share",
            source: TUTORIAL,
            comment: "Exactly one lane — the lowest active one — passes `subgroupElect()`; \
                `subgroupBroadcastFirst` (ballot page) then reads that same lane.",
            code: r#"#version 450
#extension GL_KHR_shader_subgroup_ballot: enable
layout(local_size_x = 128, local_size_y = 1, local_size_z = 1) in;
layout(std430, set=0, binding=0) buffer layout_foo {
  vec4 foo[];
};
void main() {
  vec4 value;
  if (subgroupElect()) {
    uint index; // some complicated index
    value = foo[index];
    // could even do some complicated math on value
  }
  // Tell everyone else in the subgroup the value
  value = subgroupBroadcastFirst(value);
  // Every invocation in the subgroup now has the same value
}"#,
        }],
        Category::Vote => vec![GlslUse {
            title: "Uniform branches with subgroupAll / subgroupAny",
            source: TUTORIAL,
            comment: "Both votes count active lanes only: the divergent tables above show an inactive \
                lane's value changing nothing.",
            code: r#"#version 450
#extension GL_KHR_shader_subgroup_vote: enable
layout(local_size_x = 128, local_size_y = 1, local_size_z = 1) in;
layout(std430, set=0, binding=0) buffer layout_foo {
  int foo[];
};
layout(std430, set=0, binding=1) buffer layout_bar {
  int bar[];
};
void main() {
  bool condition = foo[gl_GlobalInvocationID.x] < bar[gl_GlobalInvocationID.x];
  if (subgroupAll(condition)) {
    // all invocations in the subgroup are performing x
  } else if (!subgroupAny(condition)) {
    // all invocations in the subgroup are performing y
  } else {
    // Invocations that get here are doing a mix of x & y so have a fallback
  }
}"#,
        }],
        Category::Ballot => vec![GlslUse {
            title: "Take a branch when at least a quarter of the lanes want it: ballot + bit count",
            source: TUTORIAL,
            comment: "`subgroupBallot` sets no bit for an inactive lane, and `subgroupBallotBitCount` \
                counts only the low gl_SubgroupSize bits (tables above).",
            code: r#"#version 450
#extension GL_KHR_shader_subgroup_ballot: enable
layout(local_size_x = 128, local_size_y = 1, local_size_z = 1) in;
layout(std430, set=0, binding=0) buffer layout_foo {
  int foo[];
};
layout(std430, set=0, binding=1) buffer layout_bar {
  int bar[];
};
void main() {
  uvec4 ballot = subgroupBallot(foo[gl_GlobalInvocationID.x] < bar[gl_GlobalInvocationID.x]);
  if (gl_SubgroupSize <= (subgroupBallotBitCount(ballot) * 4)) {
    // all invocations in the subgroup are performing x
  } else {
    // all invocations in the subgroup are performing y
  }
}"#,
        }],
        Category::Arithmetic => vec![
            GlslUse {
                title: "Maximum of a data set: subgroupMax + subgroupElect + atomicMax",
                source: TUTORIAL,
                comment: "One atomic per subgroup instead of one per invocation: every active lane \
                    gets the same `subgroupMax`, and only the elected lane writes it.",
                code: r#"#version 450
#extension GL_KHR_shader_subgroup_arithmetic: enable
layout(local_size_x = 128, local_size_y = 1, local_size_z = 1) in;
layout(std430, set=0, binding=0) buffer layout_foo {
  uint foo[];
};
layout(std430, set=0, binding=1) buffer layout_bar {
  uint bar;
};
void main() {
  uint value = subgroupMax(foo[gl_GlobalInvocationID.x]);
  // A single invocation in the subgroup will do the atomic operation
  if (subgroupElect()) {
    atomicMax(bar, value);
  }
}"#,
            },
            GlslUse {
                title: "Stream compaction (triangle culling): subgroupExclusiveAdd",
                source: TUTORIAL,
                comment: "The exclusive scan gives each lane the number of vertices kept by the lanes \
                    below it — its offset in the output; the highest active lane adds its own count \
                    to get the subgroup's total and reserves that much with one atomic.",
                code: r#"// (declarations of in_triangles / out_triangles as in the tutorial)
void main() {
  // Get the 3 vertices for our triangle
  PerVertexData x = in_triangles[gl_GlobalInvocationID.x * 3 + 0];
  PerVertexData y = in_triangles[gl_GlobalInvocationID.x * 3 + 1];
  PerVertexData z = in_triangles[gl_GlobalInvocationID.x * 3 + 2];
  // Check whether the triangle should be culled or not
  bool care_about_triangle;
  uint vertices_to_keep = care_about_triangle ? 3 : 0;
  uint local_index = subgroupExclusiveAdd(vertices_to_keep);
  // Find out which active invocation has the highest ID
  uint highestActiveID = subgroupBallotFindMSB(subgroupBallot(true));
  uint global_index = 0;
  // If we're the highest active ID
  if (highestActiveID == gl_SubgroupInvocationID) {
    // We need to carve out a slice of out_triangles for our triangle
    uint local_size = local_index + vertices_to_keep;
    global_index = atomicAdd(out_triangles_size, local_size);
  }
  global_index = subgroupMax(global_index);
  if (care_about_triangle) {
    out_triangles[global_index + local_index + 0] = x;
    out_triangles[global_index + local_index + 1] = y;
    out_triangles[global_index + local_index + 2] = z;
  }
}"#,
            },
        ],
        Category::Shuffle => vec![GlslUse {
            title: "A butterfly over the subgroup: subgroupShuffleXor",
            source: TUTORIAL,
            comment: "Every lane trades with lane `id ^ i`; with every lane active and `i` below \
                gl_SubgroupSize, no read is undefined (compare the undefined cases above).",
            code: r#"#version 450
#extension GL_KHR_shader_subgroup_shuffle: enable
layout(location = 0) in vec4 x;
layout(location = 1) in float additive;
layout(location = 0) out vec4 data;
void main() {
  vec4 temp = x;
  for (uint i = 1; i <= 128; i *= 2) {
    // The mask parameter of subgroupShuffleXor must either be a constant,
    // or if used within a loop it must derive from a loop counter whose
    // initial value is constant (i = 1), its stride must be constant
    // (i *= 2) and its loop end condition must be constant (i <= 128). So
    // instead of doing i <= gl_SubgroupSize above, we make the loop counter
    // check less than 128 (which is the maximum supported subgroup size),
    // and include an additional break here.
    if (gl_SubgroupSize == i) {
      break;
    }
    vec4 other = subgroupShuffleXor(temp, i);
    temp = temp * other + additive;
  }
  data = temp;
}"#,
        }],
        Category::ShuffleRelative => vec![
            GlslUse {
                title: "Strided inclusive scan: subgroupShuffleUp",
                source: TUTORIAL,
                comment: "Lanes with `i > gl_SubgroupInvocationID` get an undefined `other` \
                    (`delta_exceeds_id` above) — and the guard makes sure they never use it.",
                code: r#"#version 450
#extension GL_KHR_shader_subgroup_shuffle_relative: enable
layout(location = 0) in vec4 x;
layout(location = 0) out vec4 data;
void main() {
  vec4 temp = x;
  // This is a custom strided inclusive scan!
  for (uint i = 2; i < gl_SubgroupSize; i *= 2) {
    vec4 other = subgroupShuffleUp(temp, i);
    if (i <= gl_SubgroupInvocationID) {
      temp = temp * other;
    }
  }
  data = temp;
}"#,
            },
            GlslUse {
                title: "Reverse inclusive scan: subgroupShuffleDown",
                source: TUTORIAL,
                comment: "The mirror image: lanes with `id + i >= gl_SubgroupSize` read past the last \
                    lane (`source_out_of_range` above) and the guard discards what they got.",
                code: r#"#version 450
#extension GL_KHR_shader_subgroup_shuffle_relative: enable
layout(location = 0) in vec4 x;
layout(location = 0) out vec4 data;
void main() {
  vec4 temp = x;
  // This is a custom reverse inclusive scan!
  for (uint i = 1; i < gl_SubgroupSize; i *= 2) {
    vec4 other = subgroupShuffleDown(temp, i);
    if ((gl_SubgroupSize - i) > gl_SubgroupInvocationID) {
      temp = temp * other;
    }
  }
  data = temp;
}"#,
            },
        ],
        Category::Clustered => vec![GlslUse {
            title: "4×4 max pooling: subgroupClusteredMax with clusters of 16",
            source: TUTORIAL,
            comment: "Each cluster of 16 lanes holds one 4×4 tile; every lane of the cluster gets the \
                tile's maximum and lane 0 of the cluster stores it.",
            code: r#"#version 450
#extension GL_KHR_shader_subgroup_clustered: enable
// Using a spec constant for the x dimension here, and we'll set this to the
// subgroup size in the Vulkan API so that the work group is the exact size of
// the subgroup
layout(local_size_x_id = 0, local_size_y = 1, local_size_z = 1) in;
layout(r16f, set = 0, binding = 0) uniform readonly image3D inImage;
layout(r16f, set = 0, binding = 1) uniform writeonly image3D outImage;
void main() {
  // We're going to perform a 4x4 max pooling operation. So we divide up our
  // subgroup size into chunks of 16. We'll split up the subgroup like so:
  // x 0 1 2 3 4 5 6 7
  // y+------------------------
  // 0| 0 1 2 3 16 17 18 19
  // 1| 4 5 6 7 20 21 22 23
  // 2| 8 9 10 11 24 25 26 27
  // 3| 12 13 14 15 28 29 30 31
  uint numClusters = gl_SubgroupSize / 16;
  uint clusterID = gl_SubgroupInvocationID / 16;
  uint x = (clusterID * 4) + (gl_SubgroupInvocationID % 4);
  uint y = (gl_SubgroupInvocationID / 4) % 4;
  uvec3 inIndex = gl_WorkGroupID * uvec3(numClusters * 4, 4, 1) + uvec3(x, y, 1);
  float load = imageLoad(inImage, ivec3(inIndex)).x;
  float max = subgroupClusteredMax(load, 16);
  if (0 == (gl_SubgroupInvocationID % 16)) {
    uvec3 outIndex = gl_WorkGroupID;
    outIndex.x = outIndex.x * numClusters + clusterID;
    imageStore(outImage, ivec3(outIndex), vec4(max));
  }
}"#,
        }],
        Category::Quad => vec![GlslUse {
            title: "Next mip level from a fragment shader: quad swaps",
            source: TUTORIAL,
            comment: "A horizontal then a vertical swap sums the 2×2 quad into every lane; lane 0 of \
                the quad (found with `subgroupQuadBroadcast(id, 0)`) stores it. In fragment shaders \
                helper invocations keep quads whole; elsewhere an inactive partner makes the swap \
                undefined (tables above).",
            code: r#"#version 450
#extension GL_KHR_shader_subgroup_quad: enable
layout(location = 0) in vec3 inColor;
layout(location = 0) out vec3 color;
layout(set = 0, binding = 0) uniform writeonly image2D lowResFrame;
void main() {
  vec3 lowResColor = inColor + subgroupQuadSwapHorizontal(inColor);
  lowResColor += subgroupQuadSwapVertical(lowResColor);
  // Store the color out to the framebuffer
  color = inColor;
  // Only the 0'th pixel of each quad will enter here and do the image store
  if (gl_SubgroupInvocationID == subgroupQuadBroadcast(gl_SubgroupInvocationID, 0)) {
    ivec2 coord = ivec2(gl_FragCoord.xy / 2.0f);
    imageStore(lowResFrame, coord, vec4(lowResColor, 1.0f));
  }
}"#,
        }],
        Category::Rotate => vec![GlslUse {
            title: "1D convolution: subgroupRotate",
            source: "written for these docs after the motivation of vk_rotate_proposal.adoc \
                (Problem Statement: rotations \"in the implementation of the convolution routines \
                used in neural network inference\"); the proposal itself has no GLSL example",
            comment: "`k` is a loop counter, so the rotation amount is dynamically uniform as rotate \
                requires. The last TAPS − 1 lanes wrap around to lane 0 and their sums are dropped; \
                with a partial subgroup a rotation could select an inactive lane (undefined, tables \
                above), so the workgroup is exactly one full subgroup.",
            code: r#"#version 450
#extension GL_KHR_shader_subgroup_rotate: enable
// One subgroup per workgroup: local_size_x is set to gl_SubgroupSize (with full subgroups
// required), and workgroups overlap by TAPS - 1 inputs.
layout(local_size_x_id = 0) in;
const uint TAPS = 3;
const float w[TAPS] = float[](0.25, 0.5, 0.25);
layout(std430, set = 0, binding = 0) readonly buffer Src { float src[]; };
layout(std430, set = 0, binding = 1) writeonly buffer Dst { float dst[]; };
void main() {
  uint outputs = gl_SubgroupSize - (TAPS - 1);      // outputs per subgroup
  uint base = gl_WorkGroupID.x * outputs;
  float x = src[base + gl_SubgroupInvocationID];
  float acc = 0.0;
  for (uint k = 0; k < TAPS; ++k) {
    acc += w[k] * subgroupRotate(x, k);             // x of lane (id + k) % gl_SubgroupSize
  }
  if (gl_SubgroupInvocationID < outputs) {
    dst[base + gl_SubgroupInvocationID] = acc;
  }
}"#,
        }],
    }
}
