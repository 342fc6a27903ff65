#include "version_info.h"

#include <torch/version.h>

#include "ringmaster_build_info.h"

namespace ringmaster::trainer {

std::string trainerVersionText()
{
#ifdef RINGMASTER_HAVE_NCCL
    const char* const cuda = "yes";
#else
    const char* const cuda = "no (LibTorch built without CUDA)";
#endif
    return std::string("ringmaster-trainer " RINGMASTER_BUILD_VERSION "\n"
                       "LibTorch " TORCH_VERSION "\n"
                       "CUDA: ") + cuda + "\n" +
           "NCCL: " + cuda + "\n" +
           "Gloo: yes\n";
}

} // namespace ringmaster::trainer
