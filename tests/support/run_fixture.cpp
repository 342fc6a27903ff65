#include "run_fixture.h"

#include <QDir>
#include <QFile>
#include <QFileInfo>

namespace ringmaster::runs::test {
namespace {

constexpr int kEvalEvery = 4;
constexpr int kBestEvalStep = 8;

} // namespace

void writeFile(const QString& path, const QByteArray& bytes)
{
    QDir().mkpath(QFileInfo(path).absolutePath());
    QFile file(path);
    if (!file.open(QIODevice::WriteOnly) || file.write(bytes) != bytes.size()) qFatal("cannot write %s", qPrintable(path));
}

QByteArray readFile(const QString& path)
{
    QFile file(path);
    if (!file.open(QIODevice::ReadOnly)) return QByteArray("<cannot read ") + path.toUtf8() + '>';
    return file.readAll();
}

QString makeTrainerRun(const QString& root, const QString& name, int steps, bool withScalars)
{
    const QString dir = root + QLatin1Char('/') + name;
    writeFile(dir + QStringLiteral("/job.json"), QByteArrayLiteral(R"({
    "launch": {"device": "cpu", "gpus": [], "grace_period": 30, "heartbeat_timeout": 120, "master_port": 37127,
               "max_restarts": 0, "nproc": 2, "output_root": "runs", "resume": "", "run_dir": "",
               "trainer_path": "/usr/bin/ringmaster-trainer"},
    "trainer": {"batch_size": "16", "data": "iris.csv", "epochs": "3", "lr": 0.01, "model": "mlp"},
    "version": 1
}
)"));
    // core/protocol/run_layout.h: kMetricsColumns and kEvalColumns; values with 9 significant digits, as older
    // trainers printed them (the trainer now prints the shortest exact form; both read the same).
    QByteArray metrics = "step,epoch,loss,lr,samples_per_sec,wall_time\n";
    QByteArray eval = "epoch,step,val_loss,val_accuracy\n";
    QByteArray scalars = "step,wall_time,name,value\n";
    for (int step = 1; step <= steps; ++step) {
        const double loss = 1.0 / step;
        const double wall = 0.25 * step;
        metrics += QByteArray::number(step) + ",0," + QByteArray::number(loss, 'g', 9) + ",0.01,1651.81," + QByteArray::number(wall, 'f', 6) + '\n';
        scalars += QByteArray::number(step) + ',' + QByteArray::number(1796049634.0 + wall, 'f', 3) + ",loss," + QByteArray::number(loss, 'g', 17) + '\n';
        if (step % kEvalEvery == 0) {
            const double accuracy = step == kBestEvalStep ? 0.9 : 0.8;
            eval += "0," + QByteArray::number(step) + ",0.5," + QByteArray::number(accuracy, 'g', 9) + '\n';
            scalars += QByteArray::number(step) + ',' + QByteArray::number(1796049634.0 + wall, 'f', 3) + ",val_accuracy," +
                       QByteArray::number(accuracy, 'g', 17) + '\n';
        }
    }
    writeFile(dir + QStringLiteral("/metrics.csv"), metrics);
    writeFile(dir + QStringLiteral("/eval.csv"), eval);
    if (withScalars) writeFile(dir + QStringLiteral("/scalars.csv"), scalars);
    writeFile(dir + QStringLiteral("/summary.json"),
              QByteArrayLiteral(R"({"backend": "gloo", "device": "cpu", "epochs": 3, "final_loss": )") +
                  QByteArray::number(1.0 / steps, 'g', 17) +
                  QByteArrayLiteral(R"(, "model": "mlp", "restarts": 0, "seconds": 3725.4, "status": "completed", "steps": )") +
                  QByteArray::number(steps) + QByteArrayLiteral(R"(, "val_accuracy": 0.8, "world_size": 2}
)"));
    writeFile(dir + QStringLiteral("/classes.json"), "[\n  \"setosa\",\n  \"versicolor\",\n  \"virginica\"\n]\n");
    writeFile(dir + QStringLiteral("/logs/rank-0.log"), "[2026-11-30 14:05:44.101] [info] rank 0 of 2 joined\n");
    writeFile(dir + QStringLiteral("/logs/rank-1.log"), "[2026-11-30 14:05:44.102] [info] rank 1 of 2 joined\n");
    writeFile(dir + QStringLiteral("/logs/launcher.log"), "launching 2 ranks\n");
    QByteArray binary;
    for (int i = 0; i < 70000; ++i) binary += static_cast<char>((i * 131 + 7) % 256);   // every byte value, > 64 KiB
    writeFile(dir + QStringLiteral("/checkpoints/step-00000010.pt"), binary);
    writeFile(dir + QStringLiteral("/model.pt"), binary.left(5000));
    return dir;
}

QString makeScriptRun(const QString& root, const QString& name)
{
    const QString dir = root + QLatin1Char('/') + name;
    writeFile(dir + QStringLiteral("/job.json"), QByteArrayLiteral(R"({
    "launch": {"device": "cpu", "gpus": [], "grace_period": 30, "master_port": 42149, "max_restarts": 0, "nproc": 3,
               "output_root": "runs", "python": "/usr/bin/python3", "resume": "", "run_dir": "",
               "script": "/home/me/train.py", "script_args": ["--lr", "0.1"], "trainer_path": ""},
    "version": 1
}
)"));
    writeFile(dir + QStringLiteral("/scalars.csv"), QByteArrayLiteral("step,wall_time,name,value\n"
                                                                      "0,1796049634.120,loss,1\n"
                                                                      "0,1796049634.121,\"train/a,b\",7\n"
                                                                      "1,1796049634.171,loss,0.5\n"
                                                                      "1,1796049634.171,val_accuracy,0.25\n"
                                                                      "2,1796049634.222,loss,0.33329999999999999\n"
                                                                      "2,1796049634.222,val_accuracy,0.75\n"
                                                                      "3,1796049634.290,val_accuracy,0.5\n"));
    writeFile(dir + QStringLiteral("/summary.json"),
              R"({"metrics_received_over_socket": 0, "restarts": 0, "seconds": 5.574, "status": "stopped", "world_size": 3})" "\n");
    writeFile(dir + QStringLiteral("/logs/rank-0.log"), "hello from rank 0\n");
    return dir;
}

} // namespace ringmaster::runs::test
