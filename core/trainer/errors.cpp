#include "trainer/errors.h"

#include <cstring>

#include <c10/util/Exception.h>

namespace ringmaster::trainer {

IoError::IoError(const std::string& path, const std::string& action, int errnoValue)
    : std::runtime_error("cannot " + action + " " + path + ": " + std::strerror(errnoValue))
{
}

std::string oneLineMessage(const std::exception& error)
{
    const auto* torchError = dynamic_cast<const c10::Error*>(&error);
    const std::string text = torchError ? torchError->what_without_backtrace() : error.what();
    return text.substr(0, text.find('\n'));
}

} // namespace ringmaster::trainer
