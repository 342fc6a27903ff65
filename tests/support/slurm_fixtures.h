#pragma once
// Fixtures for tst_slurm_components: fake Slurm tools (stubs that answer what a test wrote, a fake srun
// that runs each task with Slurm's per-task variables, a fake scontrol), a Python "script job" that
// records the rank contract it got, arguments a shell would mangle, and small file and process helpers.

#include <QJsonObject>
#include <QProcessEnvironment>
#include <QString>
#include <QStringList>
#include <QTemporaryDir>

#include <functional>

#include "supervisor/slurm/batch_script.h"
#include "test_support.h"
#include "supervisor/slurm/slurm_client.h"

namespace ringmaster::supervisor::slurmtest {

inline constexpr char kPython[] = "/usr/bin/python3";
inline constexpr int kPollMs = 200;
inline constexpr int kSlurmStartTimeoutMs = 120000;
inline constexpr int kJobDeadlineMs = 120000;
inline constexpr int kExitCannotRunHere = 77; // scripts/slurm-local.sh: not root, or Slurm not installed
inline constexpr char kInvalidJob[] = "slurm_load_jobs error: Invalid job id specified\n";

// Arguments a shell would mangle if any quoting were wrong.
extern const QStringList kAwkwardArguments;

// A Python "script job" that records what its task got: argv, the contract, the working directory.
inline constexpr char kContractDump[] = R"PY(import json, os, sys
names = ["RANK", "LOCAL_RANK", "WORLD_SIZE", "LOCAL_WORLD_SIZE", "MASTER_ADDR", "MASTER_PORT", "GROUP_RANK",
         "GROUP_WORLD_SIZE", "ROLE_NAME", "ROLE_RANK", "ROLE_WORLD_SIZE", "TORCHELASTIC_RESTART_COUNT",
         "TORCHELASTIC_MAX_RESTARTS", "TORCHELASTIC_RUN_ID", "RINGMASTER_RUN_DIR", "PYTHONUNBUFFERED",
         "OMP_NUM_THREADS", "PYTHONPATH", "RINGMASTER_TOKEN", "TORCHELASTIC_ERROR_FILE", "TORCH_NCCL_ASYNC_ERROR_HANDLING",
         "TORCHELASTIC_SIGNALS_TO_HANDLE", "ACCELERATE_USE_CPU", "RINGMASTER_STACKS_FILE", "RINGMASTER_STACKS_SIGNAL"]
run_dir = os.environ["RINGMASTER_RUN_DIR"]
record = {"argv": sys.argv[1:], "cwd": os.getcwd(), "env": {n: os.environ.get(n) for n in names}}
with open(os.path.join(run_dir, "contract-%s.json" % os.environ["RANK"]), "w") as f:
    json.dump(record, f)
print("rank %s of %s at %s:%s" % (os.environ["RANK"], os.environ["WORLD_SIZE"], os.environ["MASTER_ADDR"],
                                   os.environ["MASTER_PORT"]))
)PY";

// Stands in for srun: runs the command once per task, sequentially, with Slurm's per-task variables
// and its output in --output (%t replaced by the task number).
inline constexpr char kFakeSrun[] = R"SH(#!/bin/sh
ntasks=1; output=/dev/stdout
while [ $# -gt 0 ]; do
  case "$1" in
    --ntasks=*) ntasks=${1#--ntasks=} ;;
    --output=*) output=${1#--output=} ;;
    --*) ;;
    *) break ;;
  esac
  shift
done
rc=0; t=0
while [ $t -lt "$ntasks" ]; do
  file=$(printf '%s' "$output" | sed "s/%t/$t/g")
  SLURM_PROCID=$t SLURM_LOCALID=$t SLURM_NTASKS=$ntasks SLURM_NODEID=0 "$@" >"$file" 2>&1 || rc=$?
  t=$((t + 1))
done
exit $rc
)SH";

inline constexpr char kFakeScontrol[] = "#!/bin/sh\n[ \"$1 $2\" = \"show hostnames\" ] && printf 'fakenode7\\nfakenode8\\n'\n";

// A stub of any Slurm tool: records its arguments in NAME.args, prints NAME.out (NAME.nodes.out instead,
// where it exists, for a call with -N: sinfo's per-node listing) and NAME.err, exits NAME.rc.
inline constexpr char kStub[] = R"SH(#!/bin/sh
d=$(dirname "$0"); n=$(basename "$0")
printf '%s\n' "$*" >>"$d/$n.args"
[ -f "$d/$n.sleep" ] && sleep "$(cat "$d/$n.sleep")"
out="$d/$n.out"
case " $* " in *" -N "*) [ -f "$d/$n.nodes.out" ] && out="$d/$n.nodes.out" ;; esac
[ -f "$out" ] && cat "$out"
[ -f "$d/$n.err" ] && cat "$d/$n.err" >&2
exit "$(cat "$d/$n.rc" 2>/dev/null || echo 0)"
)SH";

using test::writeFile; // one writer for both (test_support.h)
QString readAll(const QString& path);
QJsonObject readJson(const QString& path);

struct Ran
{
    int exitCode = -1;
    QString output;
};
Ran runProgram(const QString& program, const QStringList& arguments, int timeoutMs = 30000,
               const QProcessEnvironment& env = QProcessEnvironment::systemEnvironment());
// Polls `condition` every kPollMs until it holds (true) or timeoutMs passed (false).
bool pollUntil(const std::function<bool()>& condition, int timeoutMs);

// A job running /usr/bin/python3 SCRIPT with `arguments`, 2 CPU ranks, in runDir.
BatchScriptInput scriptInput(const QString& runDir, const QString& script, const QStringList& arguments);

// Starts the one-node Slurm of scripts/slurm-local.sh once per test process. False with *skipReason set
// when it cannot run here (not root, Slurm not installed), or when RINGMASTER_REAL_SLURM_TESTS=separate
// (the real-Slurm cases then run as the ctest entry `realEntry`); a reason starting "FAIL: " means it was
// tried and failed, which fails the test rather than skipping it.
bool localSlurm(QString* skipReason, const char* realEntry);

// Kills a job a failing test left behind, so no test leaves the queue busy.
struct JobGuard
{
    SlurmClient client;
    QString jobId;
    ~JobGuard();
};

// squeue's line for the job ("57 RUNNING"), empty once Slurm has let it go.
QString queueLine(const QString& jobId);
bool waitFinal(const SlurmClient& client, const QString& jobId, SlurmJobStatus* status);

#define REQUIRE_SLURM_FOR(entry)                                                              \
    do {                                                                                      \
        QString reason;                                                                       \
        if (!::ringmaster::supervisor::slurmtest::localSlurm(&reason, entry)) {               \
            if (reason.startsWith(QStringLiteral("FAIL: "))) QFAIL(qPrintable(reason));       \
            QSKIP(qPrintable(reason));                                                        \
        }                                                                                     \
    } while (false)

// A folder of stubs of every Slurm tool (kStub).
class Stubs
{
public:
    Stubs();
    void answer(const char* tool, const QByteArray& out, const QByteArray& err = {}, int rc = 0);
    QString args(const char* tool) const;
    QString path() const { return m_dir.path(); }
    SlurmClient client(int timeoutMs = kSlurmCommandTimeoutMs) const;

private:
    QTemporaryDir m_dir;
};

} // namespace ringmaster::supervisor::slurmtest
