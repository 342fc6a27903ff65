#pragma once
// Image folders in torchvision's ImageFolder layout: DIR/<class>/<image>.png|.jpg|.jpeg, one sub-folder
// per class, classes in sorted name order, files in sorted name order within a class (byte order, as
// Python's sorted()). Only a class folder's own files count (not its sub-folders); hidden entries (a
// leading '.') and other extensions are skipped; extensions match in any case. Decoded with libpng and
// libjpeg-turbo (see image_decode.cpp for why), in parallel, into one uint8 [N, C, H, W] tensor: C is 1
// when every image is grey, else 3 (grey replicated, alpha dropped; 16-bit PNG keeps its high byte).
// Resizing is antialiased bilinear, as torch's interpolate (see image_folder.cpp).

#include <string>
#include <vector>

#include "trainer/data/loaded_data.h"

namespace ringmaster::trainer {

// `flag` ("--data" or "--val-data") starts every error message. With `classes` non-empty (the training
// split's names, for a validation folder) labels are those names' indices and a sub-folder not among
// them is an error. Throws UsageError: no class folders, an empty class folder, an unreadable or
// corrupt image (named), an image of another size when `size` does not resize (named, with both sizes).
LoadedData readImageFolder(const std::string& dir, ImageSize size, const std::string& flag,
                           const std::vector<std::string>& classes = {});

// True when `dir` looks like an image folder: a directory with at least one sub-folder.
bool looksLikeImageFolder(const std::string& dir);

} // namespace ringmaster::trainer
