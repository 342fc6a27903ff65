#include "ui/form/training_set_size.h"

#include "ui/form/trainer_option_fields.h"

#include <QFileInfo>

#include <zlib.h>

#include <array>

namespace ringmaster::ui {
namespace {

constexpr unsigned char kIdxUnsignedByte = 0x08;
constexpr unsigned char kIdxImageDims = 3;
const char* const kTrainImages = "train-images-idx3-ubyte";

} // namespace

bool isIdxFolder(const QString& data)
{
    const QString images = data + QLatin1Char('/') + QLatin1String(kTrainImages);
    return QFileInfo(data).isDir() && (QFileInfo::exists(images) || QFileInfo::exists(images + QStringLiteral(".gz")));
}

TrainingSetSize trainingSetSize(const QString& data, qint64 syntheticSamples)
{
    if (data == QLatin1String("fashion-mnist")) return {kFashionMnistTrainSamples, {}};
    if (data == QLatin1String("synthetic")) return {syntheticSamples >= 0 ? syntheticSamples : optionDefaultInteger("synthetic_samples"), {}};
    QString path = data + QLatin1Char('/') + QLatin1String(kTrainImages);
    if (!QFileInfo::exists(path)) path += QStringLiteral(".gz");
    if (!QFileInfo::exists(path)) {
        return {-1, QStringLiteral("%1 has no %2[.gz] (an MNIST-format IDX folder)").arg(data, QLatin1String(kTrainImages))};
    }
    // gzopen reads plain files as they are, so one path serves both.
    gzFile file = gzopen(QFile::encodeName(path).constData(), "rb");
    std::array<unsigned char, 8> header{};
    const int got = file ? gzread(file, header.data(), static_cast<unsigned>(header.size())) : -1;
    if (file) gzclose(file);
    if (got != static_cast<int>(header.size()) || header[0] != 0 || header[1] != 0 || header[2] != kIdxUnsignedByte ||
        header[3] != kIdxImageDims) {
        return {-1, QStringLiteral("%1 is not an IDX file of unsigned-byte images").arg(path)};
    }
    const qint64 count = (qint64(header[4]) << 24) | (qint64(header[5]) << 16) | (qint64(header[6]) << 8) | qint64(header[7]);
    return {count, {}};
}

qint64 shardSize(qint64 samples, int worldSize, bool dropLast)
{
    if (worldSize < 1) return samples;
    if (dropLast && samples % worldSize != 0) return (samples - worldSize + worldSize - 1) / worldSize;
    return (samples + worldSize - 1) / worldSize;
}

} // namespace ringmaster::ui
