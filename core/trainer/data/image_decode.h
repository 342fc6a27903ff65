#pragma once
// Decodes one PNG or JPEG file held in memory into 8-bit interleaved pixels, for the image-folder
// reader. Every PNG colour type and bit depth becomes 8-bit grey or RGB (palette expanded, 16-bit
// reduced to its high byte, alpha dropped); JPEGs become grey or RGB (a progressive one that needs more than
// 512 MiB of libjpeg's working memory, over about 85 megapixels, is refused). Corrupt or truncated data is an
// error with the library's own reason, never a call to exit() and never a half-decoded image.

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace ringmaster::trainer {

enum class ImageFormat { Png, Jpeg };

struct DecodedImage
{
    int height = 0;
    int width = 0;
    int channels = 0;                  // 1 (grey) or 3 (RGB)
    std::vector<std::uint8_t> pixels;  // height * width * channels, row-major, channels interleaved
};

// The outcome of a decode: `error` is empty on success, else the decoder's reason (no file name).
struct DecodeResult
{
    DecodedImage image;
    std::string error;
};

// With `headerOnly` only height, width and channels are filled (the pixels stay empty); the whole
// image is still checked for a valid signature and header.
DecodeResult decodeImage(const std::uint8_t* data, std::size_t size, ImageFormat format, bool headerOnly);

} // namespace ringmaster::trainer
