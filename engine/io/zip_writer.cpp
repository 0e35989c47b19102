// engine/io/zip_writer.cpp — the stored-entry zip layout (local headers, central directory, end record).
#include "io/zip_writer.h"

#include "glassbox/core/error.h"
#include "io/zip_reader.h"

namespace gb::detail {
namespace {

constexpr uint32_t kLocalSig = 0x04034b50, kCentralSig = 0x02014b50, kEndSig = 0x06054b50;
constexpr uint64_t kAlign = 64;
constexpr uint64_t kMax32 = 0xffffffffu;

void le16(std::string& s, uint32_t v) {
  s += char(v & 0xff);
  s += char((v >> 8) & 0xff);
}
void le32(std::string& s, uint32_t v) {
  le16(s, v & 0xffff);
  le16(s, v >> 16);
}

}  // namespace

void ZipWriter::put(const void* data, size_t n) {
  if (n > 0) sink_(data, n);
  at_ += n;
}

void ZipWriter::add(const std::string& name, const void* data, size_t n) {
  GB_CHECK(!finished_, "ZipWriter: add after finish");
  GB_CHECK(name.size() < 0xffff, "zip: the entry name '", name.substr(0, 64), "...' is too long");
  GB_CHECK(at_ + n + 30 + name.size() + kAlign < kMax32 && records_.size() < 0xfffe, "saving '", name,
           "': the archive would pass 4 GiB (or 65535 entries), which needs ZIP64; glassbox does not write it. "
           "Save the model in parts, or as safetensors: gb::save(model->state_dict(), \"model.safetensors\")");
  const uint32_t crc = crc32(static_cast<const unsigned char*>(data), n);
  // the extra field pads the header so the data starts at a multiple of 64 (an extra field is at least 4 bytes)
  const uint64_t header_end = at_ + 30 + name.size() + 4;
  const uint32_t pad = uint32_t((kAlign - header_end % kAlign) % kAlign);
  std::string h;
  le32(h, kLocalSig);
  le16(h, 20);  // version needed: 2.0
  le16(h, 0);   // flags
  le16(h, 0);   // stored
  le16(h, 0);   // time
  le16(h, 0x21);  // date: 1980-01-01
  le32(h, crc);
  le32(h, uint32_t(n));
  le32(h, uint32_t(n));
  le16(h, uint32_t(name.size()));
  le16(h, 4 + pad);
  h += name;
  le16(h, 0x4246);  // "FB"
  le16(h, pad);
  h.append(pad, 'Z');
  records_.push_back({name, crc, uint32_t(n), uint32_t(at_)});
  put(h.data(), h.size());
  put(data, n);
}

void ZipWriter::finish() {
  GB_CHECK(!finished_, "ZipWriter: finish twice");
  finished_ = true;
  const uint64_t cd_at = at_;
  std::string cd;
  for (const auto& r : records_) {
    le32(cd, kCentralSig);
    le16(cd, 20);  // made by
    le16(cd, 20);  // needed
    le16(cd, 0);
    le16(cd, 0);
    le16(cd, 0);
    le16(cd, 0x21);
    le32(cd, r.crc);
    le32(cd, r.size);
    le32(cd, r.size);
    le16(cd, uint32_t(r.name.size()));
    le16(cd, 0);  // extra
    le16(cd, 0);  // comment
    le16(cd, 0);  // disk
    le16(cd, 0);  // internal attributes
    le32(cd, 0);  // external attributes
    le32(cd, r.offset);
    cd += r.name;
  }
  GB_CHECK(cd_at + cd.size() + 22 < kMax32, "saving: the archive would pass 4 GiB, which needs ZIP64; glassbox does "
           "not write it. Save the model in parts, or as safetensors");
  put(cd.data(), cd.size());
  std::string end;
  le32(end, kEndSig);
  le16(end, 0);
  le16(end, 0);
  le16(end, uint32_t(records_.size()));
  le16(end, uint32_t(records_.size()));
  le32(end, uint32_t(cd.size()));
  le32(end, uint32_t(cd_at));
  le16(end, 0);
  put(end.data(), end.size());
}

}  // namespace gb::detail
