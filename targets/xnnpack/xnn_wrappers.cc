// Generated once from xnnpack.h's prototypes of the calls builder*.cc makes (xnn_recorder.h
// says why); add a wrapper here and a --wrap in cmake/mobile_targets.cmake when the adapter
// starts using another xnn_define_* call.
#include <xnnpack.h>

#include "targets/xnnpack/xnn_record_format.h"
#include "targets/xnnpack/xnn_recorder.h"

using fusefuzz::xnnpack::ActiveRecording;
using fusefuzz::xnnpack::Recording;
using namespace fusefuzz::xnnpack::record;  // the formatters

extern "C" {
enum xnn_status __real_xnn_define_add2(xnn_subgraph_t subgraph, float output_min, float output_max,
                                       uint32_t input1_id, uint32_t input2_id, uint32_t output_id,
                                       uint32_t flags);
enum xnn_status __wrap_xnn_define_add2(xnn_subgraph_t subgraph, float output_min, float output_max,
                                       uint32_t input1_id, uint32_t input2_id, uint32_t output_id,
                                       uint32_t flags) {
  if (Recording* r = ActiveRecording()) {
    Call(r, "xnn_define_add2",
         Float(output_min) + ", " + Float(output_max) + ", " + U32(input1_id) + ", " +
             U32(input2_id) + ", " + U32(output_id) + ", " + U32(flags));
  }
  return __real_xnn_define_add2(subgraph, output_min, output_max, input1_id, input2_id, output_id,
                                flags);
}

enum xnn_status __real_xnn_define_average_pooling_2d(
    xnn_subgraph_t subgraph, uint32_t input_padding_top, uint32_t input_padding_right,
    uint32_t input_padding_bottom, uint32_t input_padding_left, uint32_t pooling_height,
    uint32_t pooling_width, uint32_t stride_height, uint32_t stride_width, float output_min,
    float output_max, uint32_t input_id, uint32_t output_id, uint32_t flags);
enum xnn_status __wrap_xnn_define_average_pooling_2d(
    xnn_subgraph_t subgraph, uint32_t input_padding_top, uint32_t input_padding_right,
    uint32_t input_padding_bottom, uint32_t input_padding_left, uint32_t pooling_height,
    uint32_t pooling_width, uint32_t stride_height, uint32_t stride_width, float output_min,
    float output_max, uint32_t input_id, uint32_t output_id, uint32_t flags) {
  if (Recording* r = ActiveRecording()) {
    Call(r, "xnn_define_average_pooling_2d",
         U32(input_padding_top) + ", " + U32(input_padding_right) + ", " +
             U32(input_padding_bottom) + ", " + U32(input_padding_left) + ", " +
             U32(pooling_height) + ", " + U32(pooling_width) + ", " + U32(stride_height) + ", " +
             U32(stride_width) + ", " + Float(output_min) + ", " + Float(output_max) + ", " +
             U32(input_id) + ", " + U32(output_id) + ", " + U32(flags));
  }
  return __real_xnn_define_average_pooling_2d(
      subgraph, input_padding_top, input_padding_right, input_padding_bottom, input_padding_left,
      pooling_height, pooling_width, stride_height, stride_width, output_min, output_max, input_id,
      output_id, flags);
}

enum xnn_status __real_xnn_define_channelwise_quantized_tensor_value(
    xnn_subgraph_t subgraph, enum xnn_datatype datatype, const float* scale, size_t num_dims,
    size_t channel_dim, const size_t* dims, const void* data, uint32_t external_id, uint32_t flags,
    uint32_t* id_out);
enum xnn_status __wrap_xnn_define_channelwise_quantized_tensor_value(
    xnn_subgraph_t subgraph, enum xnn_datatype datatype, const float* scale, size_t num_dims,
    size_t channel_dim, const size_t* dims, const void* data, uint32_t external_id, uint32_t flags,
    uint32_t* id_out) {
  const enum xnn_status s = __real_xnn_define_channelwise_quantized_tensor_value(
      subgraph, datatype, scale, num_dims, channel_dim, dims, data, external_id, flags, id_out);
  Recording* r = ActiveRecording();
  if (!r || s != xnn_status_success) return s;
  // One statement per recorded array: the operands of + are unsequenced, and the arrays are
  // numbered in the order they are recorded (the same text with g++ and clang).
  const std::string scales = FloatArray(r, scale, dims[channel_dim]);
  const std::string shape = SizeArray(r, dims, num_dims);
  const std::string bytes = Bytes(r, data, Count(dims, num_dims) * ElementBytes(datatype));
  Value(r, "xnn_define_channelwise_quantized_tensor_value",
        Type(datatype) + ", " + scales + ", " + Size(num_dims) + ", " + Size(channel_dim) + ", " +
            shape + ", " + bytes + ", " + U32(external_id) + ", " + U32(flags),
        datatype, num_dims, dims, data, flags, *id_out);
  return s;
}

enum xnn_status __real_xnn_define_clamp(xnn_subgraph_t subgraph, float output_min, float output_max,
                                        uint32_t input_id, uint32_t output_id, uint32_t flags);
enum xnn_status __wrap_xnn_define_clamp(xnn_subgraph_t subgraph, float output_min, float output_max,
                                        uint32_t input_id, uint32_t output_id, uint32_t flags) {
  if (Recording* r = ActiveRecording()) {
    Call(r, "xnn_define_clamp",
         Float(output_min) + ", " + Float(output_max) + ", " + U32(input_id) + ", " +
             U32(output_id) + ", " + U32(flags));
  }
  return __real_xnn_define_clamp(subgraph, output_min, output_max, input_id, output_id, flags);
}

enum xnn_status __real_xnn_define_convert(xnn_subgraph_t subgraph, uint32_t input_id,
                                          uint32_t output_id, uint32_t flags);
enum xnn_status __wrap_xnn_define_convert(xnn_subgraph_t subgraph, uint32_t input_id,
                                          uint32_t output_id, uint32_t flags) {
  if (Recording* r = ActiveRecording()) {
    Call(r, "xnn_define_convert", U32(input_id) + ", " + U32(output_id) + ", " + U32(flags));
  }
  return __real_xnn_define_convert(subgraph, input_id, output_id, flags);
}

enum xnn_status __real_xnn_define_convolution_2d(
    xnn_subgraph_t subgraph, uint32_t input_padding_top, uint32_t input_padding_right,
    uint32_t input_padding_bottom, uint32_t input_padding_left, uint32_t kernel_height,
    uint32_t kernel_width, uint32_t subsampling_height, uint32_t subsampling_width,
    uint32_t dilation_height, uint32_t dilation_width, uint32_t groups, size_t group_input_channels,
    size_t group_output_channels, float output_min, float output_max, uint32_t input_id,
    uint32_t filter_id, uint32_t bias_id, uint32_t output_id, uint32_t flags);
enum xnn_status __wrap_xnn_define_convolution_2d(
    xnn_subgraph_t subgraph, uint32_t input_padding_top, uint32_t input_padding_right,
    uint32_t input_padding_bottom, uint32_t input_padding_left, uint32_t kernel_height,
    uint32_t kernel_width, uint32_t subsampling_height, uint32_t subsampling_width,
    uint32_t dilation_height, uint32_t dilation_width, uint32_t groups, size_t group_input_channels,
    size_t group_output_channels, float output_min, float output_max, uint32_t input_id,
    uint32_t filter_id, uint32_t bias_id, uint32_t output_id, uint32_t flags) {
  if (Recording* r = ActiveRecording()) {
    Call(r, "xnn_define_convolution_2d",
         U32(input_padding_top) + ", " + U32(input_padding_right) + ", " +
             U32(input_padding_bottom) + ", " + U32(input_padding_left) + ", " +
             U32(kernel_height) + ", " + U32(kernel_width) + ", " + U32(subsampling_height) + ", " +
             U32(subsampling_width) + ", " + U32(dilation_height) + ", " + U32(dilation_width) +
             ", " + U32(groups) + ", " + Size(group_input_channels) + ", " +
             Size(group_output_channels) + ", " + Float(output_min) + ", " + Float(output_max) +
             ", " + U32(input_id) + ", " + U32(filter_id) + ", " + U32(bias_id) + ", " +
             U32(output_id) + ", " + U32(flags));
  }
  return __real_xnn_define_convolution_2d(
      subgraph, input_padding_top, input_padding_right, input_padding_bottom, input_padding_left,
      kernel_height, kernel_width, subsampling_height, subsampling_width, dilation_height,
      dilation_width, groups, group_input_channels, group_output_channels, output_min, output_max,
      input_id, filter_id, bias_id, output_id, flags);
}

enum xnn_status __real_xnn_define_depthwise_convolution_2d(
    xnn_subgraph_t subgraph, uint32_t input_padding_top, uint32_t input_padding_right,
    uint32_t input_padding_bottom, uint32_t input_padding_left, uint32_t kernel_height,
    uint32_t kernel_width, uint32_t subsampling_height, uint32_t subsampling_width,
    uint32_t dilation_height, uint32_t dilation_width, uint32_t depth_multiplier,
    size_t input_channels, float output_min, float output_max, uint32_t input_id,
    uint32_t filter_id, uint32_t bias_id, uint32_t output_id, uint32_t flags);
enum xnn_status __wrap_xnn_define_depthwise_convolution_2d(
    xnn_subgraph_t subgraph, uint32_t input_padding_top, uint32_t input_padding_right,
    uint32_t input_padding_bottom, uint32_t input_padding_left, uint32_t kernel_height,
    uint32_t kernel_width, uint32_t subsampling_height, uint32_t subsampling_width,
    uint32_t dilation_height, uint32_t dilation_width, uint32_t depth_multiplier,
    size_t input_channels, float output_min, float output_max, uint32_t input_id,
    uint32_t filter_id, uint32_t bias_id, uint32_t output_id, uint32_t flags) {
  if (Recording* r = ActiveRecording()) {
    Call(r, "xnn_define_depthwise_convolution_2d",
         U32(input_padding_top) + ", " + U32(input_padding_right) + ", " +
             U32(input_padding_bottom) + ", " + U32(input_padding_left) + ", " +
             U32(kernel_height) + ", " + U32(kernel_width) + ", " + U32(subsampling_height) + ", " +
             U32(subsampling_width) + ", " + U32(dilation_height) + ", " + U32(dilation_width) +
             ", " + U32(depth_multiplier) + ", " + Size(input_channels) + ", " + Float(output_min) +
             ", " + Float(output_max) + ", " + U32(input_id) + ", " + U32(filter_id) + ", " +
             U32(bias_id) + ", " + U32(output_id) + ", " + U32(flags));
  }
  return __real_xnn_define_depthwise_convolution_2d(
      subgraph, input_padding_top, input_padding_right, input_padding_bottom, input_padding_left,
      kernel_height, kernel_width, subsampling_height, subsampling_width, dilation_height,
      dilation_width, depth_multiplier, input_channels, output_min, output_max, input_id, filter_id,
      bias_id, output_id, flags);
}

enum xnn_status __real_xnn_define_divide(xnn_subgraph_t subgraph, float output_min,
                                         float output_max, uint32_t input1_id, uint32_t input2_id,
                                         uint32_t output_id, uint32_t flags);
enum xnn_status __wrap_xnn_define_divide(xnn_subgraph_t subgraph, float output_min,
                                         float output_max, uint32_t input1_id, uint32_t input2_id,
                                         uint32_t output_id, uint32_t flags) {
  if (Recording* r = ActiveRecording()) {
    Call(r, "xnn_define_divide",
         Float(output_min) + ", " + Float(output_max) + ", " + U32(input1_id) + ", " +
             U32(input2_id) + ", " + U32(output_id) + ", " + U32(flags));
  }
  return __real_xnn_define_divide(subgraph, output_min, output_max, input1_id, input2_id, output_id,
                                  flags);
}

enum xnn_status __real_xnn_define_elu(xnn_subgraph_t subgraph, float alpha, uint32_t input_id,
                                      uint32_t output_id, uint32_t flags);
enum xnn_status __wrap_xnn_define_elu(xnn_subgraph_t subgraph, float alpha, uint32_t input_id,
                                      uint32_t output_id, uint32_t flags) {
  if (Recording* r = ActiveRecording()) {
    Call(r, "xnn_define_elu",
         Float(alpha) + ", " + U32(input_id) + ", " + U32(output_id) + ", " + U32(flags));
  }
  return __real_xnn_define_elu(subgraph, alpha, input_id, output_id, flags);
}

enum xnn_status __real_xnn_define_fully_connected(xnn_subgraph_t subgraph, float output_min,
                                                  float output_max, uint32_t input_id,
                                                  uint32_t filter_id, uint32_t bias_id,
                                                  uint32_t output_id, uint32_t flags);
enum xnn_status __wrap_xnn_define_fully_connected(xnn_subgraph_t subgraph, float output_min,
                                                  float output_max, uint32_t input_id,
                                                  uint32_t filter_id, uint32_t bias_id,
                                                  uint32_t output_id, uint32_t flags) {
  if (Recording* r = ActiveRecording()) {
    Call(r, "xnn_define_fully_connected",
         Float(output_min) + ", " + Float(output_max) + ", " + U32(input_id) + ", " +
             U32(filter_id) + ", " + U32(bias_id) + ", " + U32(output_id) + ", " + U32(flags));
  }
  return __real_xnn_define_fully_connected(subgraph, output_min, output_max, input_id, filter_id,
                                           bias_id, output_id, flags);
}

enum xnn_status __real_xnn_define_global_average_pooling_2d(xnn_subgraph_t subgraph,
                                                            float output_min, float output_max,
                                                            uint32_t input_id, uint32_t output_id,
                                                            uint32_t flags);
enum xnn_status __wrap_xnn_define_global_average_pooling_2d(xnn_subgraph_t subgraph,
                                                            float output_min, float output_max,
                                                            uint32_t input_id, uint32_t output_id,
                                                            uint32_t flags) {
  if (Recording* r = ActiveRecording()) {
    Call(r, "xnn_define_global_average_pooling_2d",
         Float(output_min) + ", " + Float(output_max) + ", " + U32(input_id) + ", " +
             U32(output_id) + ", " + U32(flags));
  }
  return __real_xnn_define_global_average_pooling_2d(subgraph, output_min, output_max, input_id,
                                                     output_id, flags);
}

enum xnn_status __real_xnn_define_hardswish(xnn_subgraph_t subgraph, uint32_t input_id,
                                            uint32_t output_id, uint32_t flags);
enum xnn_status __wrap_xnn_define_hardswish(xnn_subgraph_t subgraph, uint32_t input_id,
                                            uint32_t output_id, uint32_t flags) {
  if (Recording* r = ActiveRecording()) {
    Call(r, "xnn_define_hardswish", U32(input_id) + ", " + U32(output_id) + ", " + U32(flags));
  }
  return __real_xnn_define_hardswish(subgraph, input_id, output_id, flags);
}

enum xnn_status __real_xnn_define_leaky_relu(xnn_subgraph_t subgraph, float negative_slope,
                                             uint32_t input_id, uint32_t output_id, uint32_t flags);
enum xnn_status __wrap_xnn_define_leaky_relu(xnn_subgraph_t subgraph, float negative_slope,
                                             uint32_t input_id, uint32_t output_id,
                                             uint32_t flags) {
  if (Recording* r = ActiveRecording()) {
    Call(r, "xnn_define_leaky_relu",
         Float(negative_slope) + ", " + U32(input_id) + ", " + U32(output_id) + ", " + U32(flags));
  }
  return __real_xnn_define_leaky_relu(subgraph, negative_slope, input_id, output_id, flags);
}

enum xnn_status __real_xnn_define_max_pooling_2d(
    xnn_subgraph_t subgraph, uint32_t input_padding_top, uint32_t input_padding_right,
    uint32_t input_padding_bottom, uint32_t input_padding_left, uint32_t pooling_height,
    uint32_t pooling_width, uint32_t stride_height, uint32_t stride_width, uint32_t dilation_height,
    uint32_t dilation_width, float output_min, float output_max, uint32_t input_id,
    uint32_t output_id, uint32_t flags);
enum xnn_status __wrap_xnn_define_max_pooling_2d(
    xnn_subgraph_t subgraph, uint32_t input_padding_top, uint32_t input_padding_right,
    uint32_t input_padding_bottom, uint32_t input_padding_left, uint32_t pooling_height,
    uint32_t pooling_width, uint32_t stride_height, uint32_t stride_width, uint32_t dilation_height,
    uint32_t dilation_width, float output_min, float output_max, uint32_t input_id,
    uint32_t output_id, uint32_t flags) {
  if (Recording* r = ActiveRecording()) {
    Call(r, "xnn_define_max_pooling_2d",
         U32(input_padding_top) + ", " + U32(input_padding_right) + ", " +
             U32(input_padding_bottom) + ", " + U32(input_padding_left) + ", " +
             U32(pooling_height) + ", " + U32(pooling_width) + ", " + U32(stride_height) + ", " +
             U32(stride_width) + ", " + U32(dilation_height) + ", " + U32(dilation_width) + ", " +
             Float(output_min) + ", " + Float(output_max) + ", " + U32(input_id) + ", " +
             U32(output_id) + ", " + U32(flags));
  }
  return __real_xnn_define_max_pooling_2d(
      subgraph, input_padding_top, input_padding_right, input_padding_bottom, input_padding_left,
      pooling_height, pooling_width, stride_height, stride_width, dilation_height, dilation_width,
      output_min, output_max, input_id, output_id, flags);
}

enum xnn_status __real_xnn_define_multiply2(xnn_subgraph_t subgraph, float output_min,
                                            float output_max, uint32_t input1_id,
                                            uint32_t input2_id, uint32_t output_id, uint32_t flags);
enum xnn_status __wrap_xnn_define_multiply2(xnn_subgraph_t subgraph, float output_min,
                                            float output_max, uint32_t input1_id,
                                            uint32_t input2_id, uint32_t output_id,
                                            uint32_t flags) {
  if (Recording* r = ActiveRecording()) {
    Call(r, "xnn_define_multiply2",
         Float(output_min) + ", " + Float(output_max) + ", " + U32(input1_id) + ", " +
             U32(input2_id) + ", " + U32(output_id) + ", " + U32(flags));
  }
  return __real_xnn_define_multiply2(subgraph, output_min, output_max, input1_id, input2_id,
                                     output_id, flags);
}

enum xnn_status __real_xnn_define_prelu(xnn_subgraph_t subgraph, uint32_t input_id,
                                        uint32_t slope_id, uint32_t output_id, uint32_t flags);
enum xnn_status __wrap_xnn_define_prelu(xnn_subgraph_t subgraph, uint32_t input_id,
                                        uint32_t slope_id, uint32_t output_id, uint32_t flags) {
  if (Recording* r = ActiveRecording()) {
    Call(r, "xnn_define_prelu",
         U32(input_id) + ", " + U32(slope_id) + ", " + U32(output_id) + ", " + U32(flags));
  }
  return __real_xnn_define_prelu(subgraph, input_id, slope_id, output_id, flags);
}

enum xnn_status __real_xnn_define_quantized_tensor_value(xnn_subgraph_t subgraph,
                                                         enum xnn_datatype datatype,
                                                         int32_t zero_point, float scale,
                                                         size_t num_dims, const size_t* dims,
                                                         const void* data, uint32_t external_id,
                                                         uint32_t flags, uint32_t* id_out);
enum xnn_status __wrap_xnn_define_quantized_tensor_value(xnn_subgraph_t subgraph,
                                                         enum xnn_datatype datatype,
                                                         int32_t zero_point, float scale,
                                                         size_t num_dims, const size_t* dims,
                                                         const void* data, uint32_t external_id,
                                                         uint32_t flags, uint32_t* id_out) {
  const enum xnn_status s = __real_xnn_define_quantized_tensor_value(
      subgraph, datatype, zero_point, scale, num_dims, dims, data, external_id, flags, id_out);
  Recording* r = ActiveRecording();
  if (!r || s != xnn_status_success) return s;
  const std::string shape = SizeArray(r, dims, num_dims);  // recorded in a fixed order
  const std::string bytes = Bytes(r, data, Count(dims, num_dims) * ElementBytes(datatype));
  Value(r, "xnn_define_quantized_tensor_value",
        Type(datatype) + ", " + I32(zero_point) + ", " + Float(scale) + ", " + Size(num_dims) +
            ", " + shape + ", " + bytes + ", " + U32(external_id) + ", " + U32(flags),
        datatype, num_dims, dims, data, flags, *id_out);
  return s;
}

enum xnn_status __real_xnn_define_sigmoid(xnn_subgraph_t subgraph, uint32_t input_id,
                                          uint32_t output_id, uint32_t flags);
enum xnn_status __wrap_xnn_define_sigmoid(xnn_subgraph_t subgraph, uint32_t input_id,
                                          uint32_t output_id, uint32_t flags) {
  if (Recording* r = ActiveRecording()) {
    Call(r, "xnn_define_sigmoid", U32(input_id) + ", " + U32(output_id) + ", " + U32(flags));
  }
  return __real_xnn_define_sigmoid(subgraph, input_id, output_id, flags);
}

enum xnn_status __real_xnn_define_static_constant_pad(xnn_subgraph_t subgraph,
                                                      const size_t* pre_paddings,
                                                      const size_t* post_paddings,
                                                      float padding_value, uint32_t input_id,
                                                      uint32_t output_id, uint32_t flags);
enum xnn_status __wrap_xnn_define_static_constant_pad(xnn_subgraph_t subgraph,
                                                      const size_t* pre_paddings,
                                                      const size_t* post_paddings,
                                                      float padding_value, uint32_t input_id,
                                                      uint32_t output_id, uint32_t flags) {
  if (Recording* r = ActiveRecording()) {
    const std::string pre = SizeArray(r, pre_paddings, RankOf(r, input_id));  // fixed order
    const std::string post = SizeArray(r, post_paddings, RankOf(r, input_id));
    Call(r, "xnn_define_static_constant_pad",
         pre + ", " + post + ", " + Float(padding_value) + ", " + U32(input_id) + ", " +
             U32(output_id) + ", " + U32(flags));
  }
  return __real_xnn_define_static_constant_pad(subgraph, pre_paddings, post_paddings, padding_value,
                                               input_id, output_id, flags);
}

enum xnn_status __real_xnn_define_static_reshape(xnn_subgraph_t subgraph, size_t num_dims,
                                                 const size_t* new_shape, uint32_t input_id,
                                                 uint32_t output_id, uint32_t flags);
enum xnn_status __wrap_xnn_define_static_reshape(xnn_subgraph_t subgraph, size_t num_dims,
                                                 const size_t* new_shape, uint32_t input_id,
                                                 uint32_t output_id, uint32_t flags) {
  if (Recording* r = ActiveRecording()) {
    Call(r, "xnn_define_static_reshape",
         Size(num_dims) + ", " + SizeArray(r, new_shape, num_dims) + ", " + U32(input_id) + ", " +
             U32(output_id) + ", " + U32(flags));
  }
  return __real_xnn_define_static_reshape(subgraph, num_dims, new_shape, input_id, output_id,
                                          flags);
}

enum xnn_status __real_xnn_define_subtract(xnn_subgraph_t subgraph, float output_min,
                                           float output_max, uint32_t input1_id, uint32_t input2_id,
                                           uint32_t output_id, uint32_t flags);
enum xnn_status __wrap_xnn_define_subtract(xnn_subgraph_t subgraph, float output_min,
                                           float output_max, uint32_t input1_id, uint32_t input2_id,
                                           uint32_t output_id, uint32_t flags) {
  if (Recording* r = ActiveRecording()) {
    Call(r, "xnn_define_subtract",
         Float(output_min) + ", " + Float(output_max) + ", " + U32(input1_id) + ", " +
             U32(input2_id) + ", " + U32(output_id) + ", " + U32(flags));
  }
  return __real_xnn_define_subtract(subgraph, output_min, output_max, input1_id, input2_id,
                                    output_id, flags);
}

enum xnn_status __real_xnn_define_tensor_value(xnn_subgraph_t subgraph, enum xnn_datatype datatype,
                                               size_t num_dims, const size_t* dims,
                                               const void* data, uint32_t external_id,
                                               uint32_t flags, uint32_t* id_out);
enum xnn_status __wrap_xnn_define_tensor_value(xnn_subgraph_t subgraph, enum xnn_datatype datatype,
                                               size_t num_dims, const size_t* dims,
                                               const void* data, uint32_t external_id,
                                               uint32_t flags, uint32_t* id_out) {
  const enum xnn_status s = __real_xnn_define_tensor_value(subgraph, datatype, num_dims, dims, data,
                                                           external_id, flags, id_out);
  Recording* r = ActiveRecording();
  if (!r || s != xnn_status_success) return s;
  const std::string shape = SizeArray(r, dims, num_dims);  // recorded in a fixed order
  const std::string bytes = Bytes(r, data, Count(dims, num_dims) * ElementBytes(datatype));
  Value(r, "xnn_define_tensor_value",
        Type(datatype) + ", " + Size(num_dims) + ", " + shape + ", " + bytes + ", " +
            U32(external_id) + ", " + U32(flags),
        datatype, num_dims, dims, data, flags, *id_out);
  return s;
}

enum xnn_status __real_xnn_create_subgraph(uint32_t external_value_ids, uint32_t flags,
                                           xnn_subgraph_t* subgraph_out);
enum xnn_status __wrap_xnn_create_subgraph(uint32_t external_value_ids, uint32_t flags,
                                           xnn_subgraph_t* subgraph_out) {
  if (Recording* r = ActiveRecording()) {
    // A new subgraph: the adapter defines it again (fewer fusions allowed); keep only the last.
    r->statics.str("");
    r->calls.str("");
    r->values.clear();
    r->next_array = 0;
    r->external_value_ids = external_value_ids;
  }
  return __real_xnn_create_subgraph(external_value_ids, flags, subgraph_out);
}

}  // extern "C"
