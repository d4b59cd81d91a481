#version 450
#extension GL_KHR_shader_subgroup_basic : require
// Each invocation writes its lane index: the smallest kernel with a subgroup built-in.
layout(local_size_x = 8) in;
layout(set = 0, binding = 0) buffer B { uint b[]; };
void main() {
    b[gl_GlobalInvocationID.x] = gl_SubgroupInvocationID;
}
