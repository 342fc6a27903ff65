// Placeholder until the reader lands (branch wt-data).
#include "tensor_file.h"

#include "../errors.h"

namespace ringmaster::trainer {

LoadedData readTensorFile(const std::string& path, const std::string& flag)
{
    throw UsageError(flag + " " + path + ": tensor files are not supported yet");
}

} // namespace ringmaster::trainer
