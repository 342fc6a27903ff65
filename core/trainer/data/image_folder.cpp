// Placeholder until the libpng/libjpeg reader lands (branch wt-data).
#include "image_folder.h"

#include <filesystem>

#include "../errors.h"

namespace ringmaster::trainer {

LoadedData readImageFolder(const std::string& dir, ImageSize, const std::string& flag, const std::vector<std::string>&)
{
    throw UsageError(flag + " " + dir + ": image folders are not supported yet");
}

bool looksLikeImageFolder(const std::string& dir)
{
    for (const auto& entry : std::filesystem::directory_iterator(dir)) {
        if (entry.is_directory()) return true;
    }
    return false;
}

} // namespace ringmaster::trainer
