// Fuzz target: the job file as the launcher and the GUI read it (core/supervisor/job_spec.h, with its
// "launch.slurm" part, slurm/slurm_request.h). Writes arbitrary bytes to a job file in a scratch folder and
// loads it with JobSpec::load, as `ringmaster-launch --job FILE` does.
// Must hold: a bad file gives a JobError with a message (nothing else escapes); a file that loads gives back
// the same job when saved and loaded again (toJson -> fromJson -> toJson is a fixed point, the file format's
// promise), and its world size and run name can be asked for. No crash, no undefined behaviour, no leak.
#include <QJsonDocument>
#include <QString>

#include <cstdint>

#include "fuzz_support.h"
#include "supervisor/job_spec.h"

using namespace ringmaster::supervisor;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size)
{
    const std::string path = ringmaster::fuzz::writeScratchFile("job.json", ringmaster::fuzz::asText(data, size));
    JobSpec job;
    try {
        job = JobSpec::load(QString::fromStdString(path));
    } catch (const JobError& error) {
        FUZZ_CHECK(!error.message().isEmpty());
        return 0;
    }
    const QJsonObject saved = job.toJson();
    JobSpec again;
    try {
        again = JobSpec::fromJson(saved, QStringLiteral("saved job"));
    } catch (const JobError& error) {
        std::fprintf(stderr, "a loaded job does not load again once saved: %s\n%s\n", qPrintable(error.message()),
                     QJsonDocument(saved).toJson().constData());
        FUZZ_CHECK(!"a loaded job loads again once saved");
    }
    FUZZ_CHECK(again.toJson() == saved);
    (void)job.worldSize();
    (void)job.runName();
    return 0;
}
