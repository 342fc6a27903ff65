// Fuzz target: image decoding for --data IMAGE_DIR (core/trainer/data/image_decode.h: libpng and libjpeg-turbo
// behind setjmp/longjmp). Feeds arbitrary bytes to decodeImage as PNG and as JPEG, header only and whole.
// Must hold: each decode either fails with a reason (an empty image) or gives a grey or RGB image of a sane
// size whose pixels fill exactly height x width x channels, the header-only read agreeing on the size; the
// libraries' error exits come back as errors, never exit() or a jump past a destructor; memory stays bounded
// (kMaxImagePixels); no crash, no leak (the library state is freed on every error path).
#include <cstdint>

#include "trainer/data/image_decode.h"
#include "fuzz_support.h"

using namespace ringmaster::trainer;

namespace {

void decodeBoth(const std::uint8_t* data, std::size_t size, ImageFormat format)
{
    const DecodeResult header = decodeImage(data, size, format, true);
    const DecodeResult whole = decodeImage(data, size, format, false);
    for (const DecodeResult* result : {&header, &whole}) {
        if (!result->error.empty()) {
            FUZZ_CHECK(result->image.pixels.empty());
            continue;
        }
        const DecodedImage& image = result->image;
        FUZZ_CHECK(image.height > 0 && image.width > 0);
        FUZZ_CHECK(image.channels == 1 || image.channels == 3);
    }
    if (header.error.empty()) FUZZ_CHECK(header.image.pixels.empty());
    if (whole.error.empty()) {
        const DecodedImage& image = whole.image;
        FUZZ_CHECK(image.pixels.size() == std::size_t(image.height) * std::size_t(image.width) * std::size_t(image.channels));
        // What the header promised is what was decoded (a header read that fails may still leave a whole
        // decode failing too, never the other way round).
        FUZZ_CHECK(header.error.empty());
        FUZZ_CHECK(header.image.height == image.height && header.image.width == image.width &&
                   header.image.channels == image.channels);
    }
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size)
{
    decodeBoth(data, size, ImageFormat::Png);
    decodeBoth(data, size, ImageFormat::Jpeg);
    return 0;
}
