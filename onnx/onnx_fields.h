// Field numbers and enum values of onnx.proto (ONNX IR version 8, ONNX 1.12) that fusefuzz
// writes or reads. The test onnx/export_test.cc parses our bytes with libonnx's generated
// classes and runs its checker, which would catch a wrong number here.
#pragma once

namespace fusefuzz::onnxf {

// ModelProto
constexpr int kModelIrVersion = 1;
constexpr int kModelProducerName = 2;
constexpr int kModelProducerVersion = 3;
constexpr int kModelDocString = 6;
constexpr int kModelGraph = 7;
constexpr int kModelOpsetImport = 8;
constexpr int kModelMetadataProps = 14;
// OperatorSetIdProto
constexpr int kOpsetDomain = 1;
constexpr int kOpsetVersion = 2;
// StringStringEntryProto
constexpr int kEntryKey = 1;
constexpr int kEntryValue = 2;
// GraphProto
constexpr int kGraphNode = 1;
constexpr int kGraphName = 2;
constexpr int kGraphInitializer = 5;
constexpr int kGraphDocString = 10;
constexpr int kGraphInput = 11;
constexpr int kGraphOutput = 12;
// NodeProto
constexpr int kNodeInput = 1;
constexpr int kNodeOutput = 2;
constexpr int kNodeName = 3;
constexpr int kNodeOpType = 4;
constexpr int kNodeAttribute = 5;
constexpr int kNodeDocString = 6;
constexpr int kNodeDomain = 7;
// AttributeProto
constexpr int kAttrName = 1;
constexpr int kAttrF = 2;
constexpr int kAttrI = 3;
constexpr int kAttrS = 4;
constexpr int kAttrT = 5;
constexpr int kAttrFloats = 7;
constexpr int kAttrInts = 8;
constexpr int kAttrType = 20;
// AttributeProto.AttributeType
constexpr int kAttrTypeFloat = 1;
constexpr int kAttrTypeInt = 2;
constexpr int kAttrTypeString = 3;
constexpr int kAttrTypeTensor = 4;
constexpr int kAttrTypeFloats = 6;
constexpr int kAttrTypeInts = 7;
// TensorProto
constexpr int kTensorDims = 1;
constexpr int kTensorDataType = 2;
constexpr int kTensorFloatData = 4;
constexpr int kTensorInt64Data = 7;
constexpr int kTensorName = 8;
constexpr int kTensorRawData = 9;
constexpr int kTensorDataLocation = 14;
// TensorProto.DataType
constexpr int kFloat = 1;
constexpr int kInt64 = 7;
// ValueInfoProto
constexpr int kValueInfoName = 1;
constexpr int kValueInfoType = 2;
// TypeProto / TypeProto.Tensor / TensorShapeProto / Dimension
constexpr int kTypeTensorType = 1;
constexpr int kTypeTensorElemType = 1;
constexpr int kTypeTensorShape = 2;
constexpr int kShapeDim = 1;
constexpr int kDimValue = 1;

}  // namespace fusefuzz::onnxf
