#pragma once
// How many training samples a job's dataset holds, known without loading it (and without LibTorch),
// so the form can check a rank's batch against its shard as the trainer will: the built-in sets have
// fixed sizes, and a folder of MNIST-format IDX files says its count in the header of
// train-images-idx3-ubyte[.gz] (4-byte magic, then the 4-byte big-endian sample count). It is only the
// form's first answer: once ringmaster-trainer --probe has answered (it knows every data kind and the
// hold-out), the form uses the trainer's count.

#include <QString>

namespace ringmaster::ui {

inline constexpr qint64 kFashionMnistTrainSamples = 60000;

struct TrainingSetSize
{
    qint64 samples = -1; // -1: unknown (see error)
    QString error;       // why the count could not be read; empty when samples is known
};

// A folder with train-images-idx3-ubyte[.gz]: the trainer reads it as MNIST-format IDX files.
bool isIdxFolder(const QString& data);

// `data` is the trainer's --data: fashion-mnist, synthetic (syntheticSamples of them; -1: --synthetic-samples's
// default) or a folder.
TrainingSetSize trainingSetSize(const QString& data, qint64 syntheticSamples = -1);

// Samples per rank per epoch, as DistributedSampler (and the trainer) count them: ceil(N / W), or
// floor(N / W) with drop_last.
qint64 shardSize(qint64 samples, int worldSize, bool dropLast);

} // namespace ringmaster::ui
