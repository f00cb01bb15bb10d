#include "onnx/proto_writer.h"

#include <cstring>

namespace fusefuzz::pb {

void Writer::RawVarint(uint64_t v) {
  while (v >= 0x80) {
    buf_ += static_cast<char>((v & 0x7f) | 0x80);
    v >>= 7;
  }
  buf_ += static_cast<char>(v);
}

void Writer::Tag(int field, int wire_type) {
  RawVarint((static_cast<uint64_t>(field) << 3) | static_cast<uint64_t>(wire_type));
}

void Writer::Varint(int field, uint64_t v) {
  Tag(field, 0);
  RawVarint(v);
}

void Writer::Float(int field, float v) {
  Tag(field, 5);
  uint32_t bits;
  std::memcpy(&bits, &v, 4);
  for (int i = 0; i < 4; ++i) buf_ += static_cast<char>((bits >> (8 * i)) & 0xff);
}

void Writer::Bytes(int field, std::string_view bytes) {
  Tag(field, 2);
  RawVarint(bytes.size());
  buf_.append(bytes);
}

void Writer::PackedInt64(int field, const int64_t* v, size_t n) {
  Writer inner;
  for (size_t i = 0; i < n; ++i) inner.RawVarint(static_cast<uint64_t>(v[i]));
  Bytes(field, inner.data());
}

bool Reader::ReadVarint(uint64_t* v) {
  *v = 0;
  for (int shift = 0; shift < 70; shift += 7) {
    if (pos_ >= data_.size()) {
      error_ = "truncated varint at byte " + std::to_string(pos_);
      return false;
    }
    auto b = static_cast<uint8_t>(data_[pos_++]);
    *v |= static_cast<uint64_t>(b & 0x7f) << shift;
    if (!(b & 0x80)) return true;
  }
  error_ = "varint longer than 10 bytes at byte " + std::to_string(pos_);
  return false;
}

bool Reader::Next() {
  if (!error_.empty() || pos_ >= data_.size()) return false;
  uint64_t tag;
  if (!ReadVarint(&tag)) return false;
  field_ = static_cast<int>(tag >> 3);
  if (field_ == 0 || (tag >> 3) > 0x1fffffff) {
    error_ = "bad field number at byte " + std::to_string(pos_);
    return false;
  }
  switch (tag & 7) {
    case 0:
      wire_ = WireType::kVarint;
      return ReadVarint(&varint_);
    case 1:
      wire_ = WireType::kFixed64;
      if (data_.size() - pos_ < 8) break;
      pos_ += 8;  // not used by the fields we read; skipped
      return true;
    case 2: {
      wire_ = WireType::kLengthDelimited;
      uint64_t len;
      if (!ReadVarint(&len)) return false;
      if (len > data_.size() - pos_) break;
      bytes_ = data_.substr(pos_, len);
      pos_ += len;
      return true;
    }
    case 5:
      wire_ = WireType::kFixed32;
      if (data_.size() - pos_ < 4) break;
      fixed32_ = 0;
      for (int i = 0; i < 4; ++i) {
        fixed32_ |= static_cast<uint32_t>(static_cast<uint8_t>(data_[pos_ + i])) << (8 * i);
      }
      pos_ += 4;
      return true;
    default:
      error_ =
          "unsupported wire type " + std::to_string(tag & 7) + " at byte " + std::to_string(pos_);
      return false;
  }
  error_ = "truncated field " + std::to_string(field_) + " at byte " + std::to_string(pos_);
  return false;
}

}  // namespace fusefuzz::pb
