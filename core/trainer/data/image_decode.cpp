// PNG and JPEG decoding with libpng and libjpeg-turbo rather than stb_image: both are shared libraries
// that Debian maintains and patches for security (a fix reaches the trainer with `apt upgrade`, no
// rebuild), and both report corrupt or truncated files strictly with a reason, where stb_image is a
// header copied into the binary that accepts some damaged files silently.
//
// Both libraries report fatal errors through a callback that must not return. Neither may call exit()
// nor throw through C frames, so each decode runs in one function that calls setjmp; the error callback
// keeps the library's message and longjmps back there. That function holds only plain C locals (the
// library structs), so the jump skips no C++ destructor; the pixels live in the caller's DecodeResult.
#include "trainer/data/image_decode.h"

#include <csetjmp>
#include <cstdio>
#include <cstring>

#include <png.h>
// jpeglib.h needs size_t and FILE declared first.
#include <jpeglib.h>
#include <jerror.h>

namespace ringmaster::trainer {
namespace {

// Refuse images whose decoded size would be absurd (a corrupt header claiming 100000x100000).
constexpr std::uint64_t kMaxImagePixels = std::uint64_t(1) << 28;
// libjpeg's working memory: a progressive RGB image needs 6 bytes a pixel until its last scan, so this takes
// progressive JPEGs up to about 85 megapixels (baseline ones need a few rows only).
constexpr long kMaxJpegWorkingBytes = 512L << 20;
constexpr std::size_t kPngSignatureBytes = 8;
// Deflate cannot expand data more than 1032 times (zlib's FAQ: a 258-byte match costs at least 2 bits), so a
// PNG whose rows (as stored, with their filter bytes) need more than 1032 times the file's size is not whole.
constexpr std::uint64_t kMaxDeflateRatio = 1032;
constexpr std::size_t kErrorMessageBytes = 256;

bool tooLarge(std::uint64_t height, std::uint64_t width)
{
    return height == 0 || width == 0 || height * width > kMaxImagePixels;
}

std::string sizeError(std::uint64_t height, std::uint64_t width)
{
    return "declares an implausible size " + std::to_string(width) + "x" + std::to_string(height) +
           " (corrupt header)";
}

// ---- PNG ----

struct PngSource
{
    const std::uint8_t* data;
    std::size_t size;
    std::size_t offset;
    char message[kErrorMessageBytes];
};

void pngReadFromMemory(png_structp png, png_bytep out, png_size_t length)
{
    auto* source = static_cast<PngSource*>(png_get_io_ptr(png));
    if (length > source->size - source->offset) png_error(png, "the file ends early (truncated)");
    std::memcpy(out, source->data + source->offset, length);
    source->offset += length;
}

void pngError(png_structp png, png_const_charp message)
{
    auto* source = static_cast<PngSource*>(png_get_error_ptr(png));
    std::snprintf(source->message, sizeof source->message, "%s", message);
    png_longjmp(png, 1);
}

void pngIgnoreWarning(png_structp, png_const_charp) {}

// The one frame that calls setjmp: only C locals here.
bool decodePngInto(PngSource* source, bool headerOnly, DecodedImage* image)
{
    png_structp png = png_create_read_struct(PNG_LIBPNG_VER_STRING, source, pngError, pngIgnoreWarning);
    if (!png) {
        std::snprintf(source->message, sizeof source->message, "libpng could not allocate its state");
        return false;
    }
    png_infop info = png_create_info_struct(png);
    if (!info) {
        png_destroy_read_struct(&png, nullptr, nullptr);
        std::snprintf(source->message, sizeof source->message, "libpng could not allocate its state");
        return false;
    }
    if (setjmp(png_jmpbuf(png))) {
        png_destroy_read_struct(&png, &info, nullptr);
        return false;
    }
    png_set_read_fn(png, source, pngReadFromMemory);
    png_read_info(png, info);
    // A file with valid checksums may still declare 16384 x 16384 and hold a few bytes of image data: refuse it
    // before anything is allocated for its pixels (rows as stored, each with its filter byte).
    const std::uint64_t storedBytes =
        std::uint64_t(png_get_image_height(png, info)) * (std::uint64_t(png_get_rowbytes(png, info)) + 1);
    if (storedBytes > kMaxDeflateRatio * source->size) {
        std::snprintf(source->message, sizeof source->message,
                      "declares %ux%u, more than its %zu bytes can hold (truncated or corrupt)",
                      static_cast<unsigned>(png_get_image_width(png, info)),
                      static_cast<unsigned>(png_get_image_height(png, info)), source->size);
        png_destroy_read_struct(&png, &info, nullptr);
        return false;
    }
    // Every colour type to 8-bit grey or RGB: palette -> RGB, grey of 1/2/4 bits -> 8 bits, tRNS ->
    // alpha; 16-bit samples keep their high byte (png_set_strip_16, no rounding); alpha is dropped, not
    // composited (as PIL's convert("RGB") / convert("L") do).
    png_set_expand(png);
    png_set_strip_16(png);
    png_set_strip_alpha(png);
    const int passes = png_set_interlace_handling(png);
    png_read_update_info(png, info);
    const png_uint_32 width = png_get_image_width(png, info);
    const png_uint_32 height = png_get_image_height(png, info);
    if (tooLarge(height, width)) {
        std::snprintf(source->message, sizeof source->message, "%s", sizeError(height, width).c_str());
        png_destroy_read_struct(&png, &info, nullptr);
        return false;
    }
    image->height = static_cast<int>(height);
    image->width = static_cast<int>(width);
    image->channels = png_get_channels(png, info);
    if (!headerOnly) {
        const std::size_t stride = std::size_t(width) * image->channels;
        if (passes == 1) {
            // Rows are added as they are decoded (as for JPEG): a file that stops early fails having touched only
            // the memory of the rows it holds.
            image->pixels.reserve(stride * height);
            for (png_uint_32 y = 0; y < height; ++y) {
                image->pixels.resize(image->pixels.size() + stride);
                png_read_row(png, image->pixels.data() + std::size_t(y) * stride, nullptr);
            }
        } else {
            // Interlaced: every pass writes into the whole image.
            image->pixels.resize(stride * height);
            for (int pass = 0; pass < passes; ++pass) {
                for (png_uint_32 y = 0; y < height; ++y) png_read_row(png, image->pixels.data() + y * stride, nullptr);
            }
        }
        png_read_end(png, nullptr);
    }
    png_destroy_read_struct(&png, &info, nullptr);
    return true;
}

DecodeResult decodePng(const std::uint8_t* data, std::size_t size, bool headerOnly)
{
    DecodeResult result;
    if (size < kPngSignatureBytes || png_sig_cmp(data, 0, kPngSignatureBytes) != 0) {
        result.error = "not a PNG file (bad signature)";
        return result;
    }
    PngSource source{data, size, 0, {}};
    if (!decodePngInto(&source, headerOnly, &result.image)) {
        result.error = std::string("corrupt PNG: ") + source.message;
        result.image = DecodedImage{};
    } else if (result.image.channels != 1 && result.image.channels != 3) {
        result.error = "unexpected PNG layout with " + std::to_string(result.image.channels) + " channels";
    }
    return result;
}

// ---- JPEG ----

struct JpegErrorManager
{
    jpeg_error_mgr base;  // first, so libjpeg's cinfo->err points at the whole struct
    std::jmp_buf jump;
    char message[JMSG_LENGTH_MAX];
};

[[noreturn]] void jpegErrorExit(j_common_ptr cinfo)
{
    auto* errors = reinterpret_cast<JpegErrorManager*>(cinfo->err);
    (*cinfo->err->format_message)(cinfo, errors->message);
    std::longjmp(errors->jump, 1);
}

// Warnings are silent except data that stops early, which libjpeg would otherwise pad with grey: the file ends
// (JWRN_JPEG_EOF), or a marker such as the end of image comes before the rows are all there (JWRN_HIT_MARKER; a
// 679-byte file claiming 16384 x 16384 decoded "successfully" to 805 MB of grey, seen while fuzzing).
void jpegEmitMessage(j_common_ptr cinfo, int level)
{
    if (level < 0 && (cinfo->err->msg_code == JWRN_JPEG_EOF || cinfo->err->msg_code == JWRN_HIT_MARKER)) jpegErrorExit(cinfo);
}

// The one frame that calls setjmp: only C locals here.
bool decodeJpegInto(const std::uint8_t* data, std::size_t size, bool headerOnly, DecodedImage* image,
                    JpegErrorManager* errors)
{
    jpeg_decompress_struct cinfo;
    cinfo.err = jpeg_std_error(&errors->base);
    errors->base.error_exit = jpegErrorExit;
    errors->base.emit_message = jpegEmitMessage;
    if (setjmp(errors->jump)) {
        jpeg_destroy_decompress(&cinfo);
        return false;
    }
    jpeg_create_decompress(&cinfo);
    jpeg_mem_src(&cinfo, data, static_cast<unsigned long>(size));
    jpeg_read_header(&cinfo, TRUE);
    cinfo.out_color_space = cinfo.jpeg_color_space == JCS_GRAYSCALE ? JCS_GRAYSCALE : JCS_RGB;
    jpeg_calc_output_dimensions(&cinfo);
    if (tooLarge(cinfo.output_height, cinfo.output_width)) {
        std::snprintf(errors->message, sizeof errors->message, "%s",
                      sizeError(cinfo.output_height, cinfo.output_width).c_str());
        jpeg_destroy_decompress(&cinfo);
        return false;
    }
    image->height = static_cast<int>(cinfo.output_height);
    image->width = static_cast<int>(cinfo.output_width);
    image->channels = cinfo.output_components;
    if (!headerOnly) {
        // libjpeg's own buffers (a progressive image holds every coefficient until its last scan) are bounded;
        // past the bound it has no backing store and stops with an error instead of allocating.
        cinfo.mem->max_memory_to_use = kMaxJpegWorkingBytes;
        jpeg_start_decompress(&cinfo);
        const std::size_t stride = std::size_t(image->width) * image->channels;
        // Rows are added as they are decoded: a small file claiming a large image fails after the rows it holds,
        // having touched only their memory.
        image->pixels.reserve(stride * image->height);
        while (cinfo.output_scanline < cinfo.output_height) {
            image->pixels.resize(image->pixels.size() + stride);
            JSAMPROW row = image->pixels.data() + std::size_t(cinfo.output_scanline) * stride;
            jpeg_read_scanlines(&cinfo, &row, 1);
        }
        jpeg_finish_decompress(&cinfo);
    }
    jpeg_destroy_decompress(&cinfo);
    return true;
}

DecodeResult decodeJpeg(const std::uint8_t* data, std::size_t size, bool headerOnly)
{
    DecodeResult result;
    JpegErrorManager errors{};
    if (!decodeJpegInto(data, size, headerOnly, &result.image, &errors)) {
        result.error = std::string("corrupt JPEG: ") + errors.message;
        result.image = DecodedImage{};
    }
    return result;
}

} // namespace

DecodeResult decodeImage(const std::uint8_t* data, std::size_t size, ImageFormat format, bool headerOnly)
{
    return format == ImageFormat::Png ? decodePng(data, size, headerOnly) : decodeJpeg(data, size, headerOnly);
}

} // namespace ringmaster::trainer
