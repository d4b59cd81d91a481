#version 450
// The Vulkan Subgroup Tutorial's triangle compaction (seeds/000): subgroupExclusiveAdd gives each
// kept triangle its place inside the subgroup's slice, the highest active invocation
// (subgroupBallotFindMSB) reserves the slice with one atomicAdd, subgroupMax hands its start to
// everyone. The tutorial leaves `care_about_triangle` uninitialised; here it is "the triangle's
// mean z is above 0", so the kernel runs. The tutorial keeps the count in front of the triangles in
// one buffer; here it has its own: where each slice lands depends on the order of the atomicAdds,
// and the model, which does not follow a pointer's possible range, would otherwise count the
// counter among the elements such a store might have reached.
#extension GL_KHR_shader_subgroup_ballot : enable
#extension GL_KHR_shader_subgroup_arithmetic : enable
layout(local_size_x = 128, local_size_y = 1, local_size_z = 1) in;
struct PerVertexData {
  float x;
  float y;
  float z;
  float u;
  float v;
};
layout(std430, set = 0, binding = 0) buffer layout_in_triangles {
  PerVertexData in_triangles[];
};
layout(std430, set = 0, binding = 1) buffer layout_out_triangles_size {
  uint out_triangles_size; // Needs to be set to 0 before shader invocation
};
layout(std430, set = 0, binding = 2) buffer layout_out_triangles {
  PerVertexData out_triangles[];
};
void main() {
  // Get the 3 vertices for our triangle
  PerVertexData x = in_triangles[gl_GlobalInvocationID.x * 3 + 0];
  PerVertexData y = in_triangles[gl_GlobalInvocationID.x * 3 + 1];
  PerVertexData z = in_triangles[gl_GlobalInvocationID.x * 3 + 2];
  // Check whether the triangle should be culled or not
  bool care_about_triangle = x.z + y.z + z.z > 0.0;
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
}
