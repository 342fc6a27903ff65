#include "cli/version_text.h"

#include <QtGlobal>

#include <cstdio>
#include <cstring>

#include "ringmaster_build_info.h"

namespace ringmaster::cli {

QString versionText(const QString& program, const QString& extra)
{
    const QString cuda = RINGMASTER_BUILD_WITH_CUDA ? QStringLiteral("yes (in ringmaster-trainer)")
                                                    : QStringLiteral("no (LibTorch built without CUDA)");
    return program + QStringLiteral(" " RINGMASTER_BUILD_VERSION "\n") +
           QStringLiteral("Qt %1 (built with " QT_VERSION_STR ")\n").arg(QString::fromLatin1(qVersion())) +
           QStringLiteral("LibTorch " RINGMASTER_BUILD_LIBTORCH_VERSION " (in ringmaster-trainer; not loaded by this program)\n") +
           QStringLiteral("CUDA: ") + cuda + QLatin1Char('\n') +
           QStringLiteral("NCCL: ") + cuda + QLatin1Char('\n') + (extra.isEmpty() ? QString() : extra + QLatin1Char('\n'));
}

bool isVersionRequest(int argc, char** argv)
{
    return argc > 1 && std::strcmp(argv[1], "--version") == 0;
}

int printVersion(const char* program, const QString& extra)
{
    std::fputs(versionText(QString::fromUtf8(program), extra).toUtf8().constData(), stdout);
    return 0;
}

} // namespace ringmaster::cli
