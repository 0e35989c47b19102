// engine/data/image_decode.cpp — image bytes to an Image: the header is checked here, then stb_image decodes.
//
// stb_image trusts headers: it allocates what a header claims, and past the end of a file it reads zeros, so a
// truncated or damaged file decodes into a plausible image of zeros (and a 55-byte BMP claiming 4194304x3 pixels
// takes seconds). Before stb_image sees the bytes, the header's pixel count is held to max_pixels (PIL's limit by
// default) and, where the format says how many bytes the pixels need (BMP, TGA, PGM/PPM) or where it ends (JPEG's
// EOI marker, PNG's IEND chunk), the file is held to it: a truncated file is refused, as PIL refuses it. Headers
// stb_image itself mis-parses (PGM/PPM numbers, JPEG Huffman tables, PNG chunk lengths) are checked before any
// stb_image call. GIF's canvas may be larger than its frames, so only max_pixels bounds it.
#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <string_view>

#include "glassbox/core/error.h"
#include "glassbox/data/transforms.h"

#define STB_IMAGE_IMPLEMENTATION
#define STBI_FAILURE_USERMSG
#define STBI_ONLY_PNG  // the formats ImageFolder lists; PSD, PIC and HDR are not images a dataset holds
#define STBI_ONLY_JPEG
#define STBI_ONLY_BMP
#define STBI_ONLY_GIF
#define STBI_ONLY_TGA
#define STBI_ONLY_PNM
#if __has_include(<stb/stb_image.h>)
#include <stb/stb_image.h>
#else
#include <stb_image.h>
#endif

namespace gb::data {

namespace {

using Bytes = std::vector<uint8_t>;

int64_t le16(const Bytes& b, size_t i) { return b[i] | b[i + 1] << 8; }
int64_t le32(const Bytes& b, size_t i) {
  return static_cast<int32_t>(uint32_t(b[i]) | uint32_t(b[i + 1]) << 8 | uint32_t(b[i + 2]) << 16 |
                              uint32_t(b[i + 3]) << 24);
}
int64_t be16(const Bytes& b, size_t i) { return b[i] << 8 | b[i + 1]; }

void check_size(const Bytes& b, const std::string& name, const char* format, int64_t need, int64_t w, int64_t h) {
  GB_CHECK(need <= static_cast<int64_t>(b.size()), "cannot decode image ", name, ": its ", format, " header declares ",
           w, "x", h, " pixels, which need at least ", need, " bytes, but the file holds ", b.size(),
           ": the file is truncated or damaged; replace or remove it");
}

// stb_image's binary PGM/PPM reader overflows an int on a long number, overruns its buffer on a damaged 16-bit file
// and allocates whatever size the header claims (all found by fuzz/image_fuzz.cpp): such a header is checked here,
// before stb_image sees it. 16-bit files are refused.
void check_pnm(const Bytes& b, const std::string& name) {
  static const char* const kField[] = {"width", "height", "maximum value"};
  size_t i = 2;
  int64_t v[3] = {0, 0, 0};
  for (int k = 0; k < 3; ++k) {
    while (i < b.size() && (std::isspace(b[i]) || b[i] == '#')) {  // whitespace and # comments
      if (b[i] == '#')
        while (i < b.size() && b[i] != '\n' && b[i] != '\r') ++i;
      else
        ++i;
    }
    int digits = 0;
    for (; i < b.size() && std::isdigit(b[i]) && digits < 10; ++i, ++digits) v[k] = v[k] * 10 + (b[i] - '0');
    GB_CHECK(digits > 0 && digits < 10, "cannot decode image ", name, ": its PGM/PPM header is damaged (the ",
             kField[k], " is not a number below 10^9)");
  }
  GB_CHECK(v[2] <= 255, "cannot decode image ", name,
           ": 16-bit PGM/PPM images are not supported; convert it to 8 bits (e.g. `convert IN -depth 8 OUT`)");
  const int64_t need = v[0] * v[1] * (b[1] == '6' ? 3 : 1),
                have = static_cast<int64_t>(b.size() - std::min(b.size(), i + 1));
  GB_CHECK(need <= have, "cannot decode image ", name, ": its PGM/PPM header declares ", v[0], "x", v[1], " pixels (",
           need, " bytes) but the file holds ", have, " after it: the file is truncated or damaged");
}

// An uncompressed BMP (stb_image decodes no other) holds its rows from the pixel offset on, each padded to 4 bytes
// (the last row's padding may be missing).
void check_bmp(const Bytes& b, const std::string& name, int64_t w, int64_t h) {
  if (b.size() < 30) return;  // too short for a header: stb_image refuses it
  const int64_t offset = le32(b, 10) & 0xffffffff, header = le32(b, 14);
  const int64_t bpp = header == 12 ? le16(b, 24) : le16(b, 28);
  if (bpp <= 0 || bpp > 32) return;  // stb_image refuses it
  const int64_t row = (w * bpp + 7) / 8, stride = (w * bpp + 31) / 32 * 4;
  check_size(b, name, "BMP", offset + stride * (h - 1) + row, w, h);
}

// A TGA holds an 18-byte header, an id, a colour map, then the pixels: raw (types 1-3), or run-length coded
// (types 9-11: packets of 1-128 pixels, a run of one value or the values themselves, walked here to their end).
void check_tga(const Bytes& b, const std::string& name, int64_t w, int64_t h) {
  if (b.size() < 18) return;
  const int64_t type = b[2], pixel = (b[16] + 7) / 8, map = b[1] == 1 ? le16(b, 5) * ((b[7] + 7) / 8) : 0;
  const int64_t head = 18 + b[0] + map, size = static_cast<int64_t>(b.size());
  if (type >= 1 && type <= 3) check_size(b, name, "TGA", head + w * h * pixel, w, h);
  if (type < 9 || type > 11) return;
  int64_t at = head, done = 0;  // bytes walked, pixels they hold
  while (done < w * h && at < size) {
    const int64_t n = (b[size_t(at)] & 127) + 1;
    at += 1 + (b[size_t(at)] & 128 ? pixel : n * pixel);
    done += n;
  }
  check_size(b, name, "TGA", at + (w * h - std::min(done, w * h) + 127) / 128 * (1 + pixel), w, h);
}

// A JPEG is walked marker by marker, the way stb_image reads it (fill bytes 0xFF before a marker are skipped):
// segments by their length, each scan's entropy-coded data up to the next marker (a data 0xFF is followed by 0x00
// or a restart marker). Every Huffman table (DHT) is checked: stb_image writes a table's code lengths into a
// 257-entry array without checking that the 16 counts sum to at most 256 (found by fuzz/image_fuzz.cpp: an
// out-of-bounds write). A JPEG without its end-of-image marker was cut short: past the end stb_image decodes zeros.
void check_jpeg(const Bytes& b, const std::string& name) {
  auto damaged = [&](std::string_view what) {
    throw Error(detail::str_cat("cannot decode image ", name, ": the JPEG ", what,
                                ": the file is truncated or damaged; replace or remove it"));
  };
  const size_t n = b.size();
  size_t i = 0;
  while (i < n && b[i] == 0xff) ++i;  // fill bytes, then SOI
  ++i;
  while (i < n) {
    if (b[i] != 0xff) return;  // not at a marker: damaged, stb_image refuses it
    while (i < n && b[i] == 0xff) ++i;
    if (i >= n) break;
    const uint8_t m = b[i++];
    if (m == 0xd9) return;                                   // EOI
    if (m == 0x01 || (m >= 0xd0 && m <= 0xd7)) continue;     // markers without a segment
    if (i + 2 > n) break;
    const size_t len = static_cast<size_t>(be16(b, i));
    if (len < 2 || i + len > n) break;
    if (m == 0xc4) {  // DHT: one or more tables of (class/id, 16 counts, values)
      for (size_t t = i + 2; t < i + len;) {
        if (t + 17 > i + len) damaged("has a damaged Huffman table");
        size_t codes = 0;
        for (size_t k = 0; k < 16; ++k) codes += b[t + 1 + k];
        if (codes > 256) damaged("has a Huffman table of more than 256 codes");
        t += 17 + codes;
      }
    }
    i += len;
    if (m == 0xda) {  // SOS: the entropy-coded data runs to the next marker
      while (i + 1 < n && !(b[i] == 0xff && b[i + 1] != 0x00 && !(b[i + 1] >= 0xd0 && b[i + 1] <= 0xd7))) ++i;
      if (i + 1 >= n) break;  // the data ran to the end of the file
    }
  }
  damaged(detail::str_cat("ends (", n, " bytes) before its end-of-image marker"));
}

// A PNG is a signature and chunks (4-byte length, type, data, CRC) ending with IEND. stb_image grows its buffer to
// a chunk's declared length before reading it (found by fuzz/image_fuzz.cpp: a damaged length asked for 2 GiB):
// every chunk must fit in the file, and IEND must come, as PIL requires of a file that is not truncated.
void check_png(const Bytes& b, const std::string& name) {
  const size_t n = b.size();
  for (size_t i = 8; i + 12 <= n;) {
    const size_t len = size_t(b[i]) << 24 | size_t(b[i + 1]) << 16 | size_t(b[i + 2]) << 8 | b[i + 3];
    GB_CHECK(len <= n - i - 12, "cannot decode image ", name, ": a PNG chunk declares ", len, " bytes but the file "
             "holds ", n - i - 12, " after it: the file is truncated or damaged; replace or remove it");
    if (std::memcmp(&b[i + 4], "IEND", 4) == 0) return;
    i += 12 + len;
  }
  throw Error(detail::str_cat("cannot decode image ", name, ": the PNG ends (", n,
                              " bytes) before its IEND chunk: the file is truncated or damaged; replace or remove it"));
}

}  // namespace

Image decode_image(const std::vector<uint8_t>& bytes, const std::string& name, int channels, int64_t max_pixels) {
  GB_CHECK(channels >= 0 && channels <= 4, "decode_image: channels must be 0 (as in the file), 1, 3 or 4, got ",
           channels);
  GB_CHECK(bytes.size() < (size_t(1) << 31), "cannot decode image ", name, ": it is ", bytes.size(),
           " bytes, more than the 2 GiB stb_image reads");
  // Checks that need no dimensions run first: stb_image's own header parsing (stbi_info) has the bugs they avoid.
  if (bytes.size() >= 2 && bytes[0] == 'P' && (bytes[1] == '5' || bytes[1] == '6')) check_pnm(bytes, name);
  if (!bytes.empty() && bytes[0] == 0xff) check_jpeg(bytes, name);  // stb_image skips 0xFF fill bytes before SOI
  if (bytes.size() >= 8 && std::memcmp(bytes.data(), "\x89PNG\r\n\x1a\n", 8) == 0) check_png(bytes, name);
  int w = 0, h = 0, c = 0;
  // A header stb_image cannot read is refused here: decoding it anyway has cost seconds (found by fuzz_image: a BMP
  // whose width stbi_info rejects, which the loader then walked row by row).
  GB_CHECK(stbi_info_from_memory(bytes.data(), static_cast<int>(bytes.size()), &w, &h, &c), "cannot decode image ",
           name, " (", bytes.size(), " bytes): ", stbi_failure_reason(),
           "; the file is not a PNG/JPEG/BMP/GIF/TGA/PNM image or is damaged: replace or remove it");
  {
    // stbi_info gives a top-down BMP's height negative (found by fuzz_image): sizes are held as magnitudes.
    const int64_t W = std::llabs(int64_t(w)), H = std::llabs(int64_t(h));
    GB_CHECK(W * H <= max_pixels, "cannot decode image ", name, ": it declares ", W, "x", H,
             " pixels, more than the limit of ", max_pixels,
             " (PIL's, against decompression bombs and damaged headers); if the image is genuine, raise "
             "ImageFolderOptions().max_pixels(N)");
    if (bytes[0] == 'B' && bytes[1] == 'M')
      check_bmp(bytes, name, W, H);
    else if (bytes[0] != 0x89 && bytes[0] != 'G' && bytes[0] != 'P' && bytes[0] != 0xff)
      check_tga(bytes, name, W, H);  // not PNG, GIF, PNM or JPEG: stb_image took it for a TGA
  }
  uint8_t* p = stbi_load_from_memory(bytes.data(), static_cast<int>(bytes.size()), &w, &h, &c, channels);
  GB_CHECK(p, "cannot decode image ", name, " (", bytes.size(), " bytes): ", stbi_failure_reason(),
           "; the file is not a PNG/JPEG/BMP/GIF/TGA/PNM image or is damaged: replace or remove it");
  Image img;
  img.height = h;
  img.width = w;
  img.channels = channels ? channels : c;
  img.pixels.assign(p, p + static_cast<size_t>(h) * w * img.channels);
  stbi_image_free(p);
  return img;
}

Image read_image(const std::string& path, int channels, int64_t max_pixels) {
  std::ifstream f(path, std::ios::binary);
  GB_CHECK(f, "cannot open image ", path, ": ", std::strerror(errno));
  std::vector<uint8_t> bytes((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  return decode_image(bytes, path, channels, max_pixels);
}

}  // namespace gb::data
