#pragma once
// What a dataset reader hands the trainer: one split's samples as two tensors in the compact type the
// source holds (images stay uint8 until a batch is taken, so a rank holds a quarter of the float
// bytes), plus the class names when the source names its classes. Every reader validates while it
// reads and throws UsageError with one line naming the flag, the file (and the line or the image) and
// what is wrong; nothing here knows about ranks, models or normalisation.

#include <cstdint>
#include <string>
#include <vector>

#include <torch/torch.h>

namespace ringmaster::trainer {

struct LoadedData
{
    // uint8 [N, C, H, W] for images (IDX, image folders); as the source holds them otherwise
    // (tensor files: float32 or uint8, any trailing shape; CSV: float32 [N, F]).
    torch::Tensor inputs;
    // int64 [N] class indices in [0, classes), or float32 [N] / [N, K] targets.
    torch::Tensor targets;
    // Index -> name (image folders: sub-folder names; CSV: string labels), sorted by name; empty when
    // the source's labels are bare numbers.
    std::vector<std::string> classNames;
    // One phrase for logs and summary.json, e.g. "image folder /d (1200 images, 5 classes, 3x32x32)".
    std::string description;

    std::int64_t size() const { return inputs.defined() ? inputs.size(0) : 0; }
};

// --image-size H,W; zero: keep each image's size (then every image must have the same).
struct ImageSize
{
    std::int64_t height = 0;
    std::int64_t width = 0;
    bool resizes() const { return height > 0 && width > 0; }
};

} // namespace ringmaster::trainer
