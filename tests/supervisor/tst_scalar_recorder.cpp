// ScalarRecorder: scalars.csv has its header once, one row per value with every bit of the value, names
// quoted as CSV readers expect, rows on disk as soon as append() returns, and a resumed run appends.
#include <QDateTime>
#include <QFile>
#include <QProcess>
#include <QTemporaryDir>
#include <QTest>

#include <cmath>

#include "protocol/run_layout.h"
#include "supervisor/scalar_recorder.h"

using namespace ringmaster::supervisor;

namespace {

QStringList linesOf(const QString& path)
{
    QFile file(path);
    if (!file.open(QIODevice::ReadOnly)) return {QStringLiteral("<cannot open %1>").arg(path)};
    return QString::fromUtf8(file.readAll()).split(QLatin1Char('\n'));
}

ScalarBatch batch(qint64 step, QList<Scalar> values)
{
    ScalarBatch b;
    b.step = step;
    b.values = std::move(values);
    return b;
}

} // namespace

class TestScalarRecorder : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void rowsAreDurableAndExact()
    {
        QTemporaryDir dir;
        ScalarRecorder recorder;
        QVERIFY2(recorder.open(dir.path()), qPrintable(recorder.error()));
        const double third = 1.0 / 3.0;
        QVERIFY(recorder.append(batch(5, {{QStringLiteral("loss"), third}, {QStringLiteral("lr"), 1e-300}}), 1764504000.25));
        // On disk while the recorder is still open (another process, e.g. a closed GUI, would see it).
        const QStringList lines = linesOf(dir.filePath(QStringLiteral("scalars.csv")));
        QCOMPARE(lines, (QStringList{QStringLiteral("step,wall_time,name,value"),
                                     QStringLiteral("5,1764504000.250,loss,0.33333333333333331"),
                                     QStringLiteral("5,1764504000.250,lr,1e-300"), QString()}));
        QCOMPARE(lines.at(1).section(QLatin1Char(','), 3).toDouble(), third); // bit-exact round trip
        QCOMPARE(recorder.rowsWritten(), 2);
    }

    void namesAreQuotedForCsvReaders()
    {
        QTemporaryDir dir;
        ScalarRecorder recorder;
        QVERIFY(recorder.open(dir.path()));
        QVERIFY(recorder.append(batch(1, {{QStringLiteral("a,b"), 1.0}, {QStringLiteral("say \"hi\""), 2.0},
                                          {QStringLiteral("train/loss"), -0.5}})));
        QCOMPARE(QString::fromStdString(ringmaster::protocol::csvField("a,b")), QStringLiteral("\"a,b\""));
        QCOMPARE(QString::fromStdString(ringmaster::protocol::csvField("say \"hi\"")), QStringLiteral("\"say \"\"hi\"\"\""));
        // Python's csv module reads back the same names and values.
        QProcess python;
        python.start(QStringLiteral("/usr/bin/python3"),
                     {QStringLiteral("-c"),
                      QStringLiteral("import csv,sys; rows=list(csv.DictReader(open(sys.argv[1])));"
                                     "print('|'.join(r['name']+'='+r['value'] for r in rows))"),
                      dir.filePath(QStringLiteral("scalars.csv"))});
        QVERIFY(python.waitForFinished(30000));
        QCOMPARE(QString::fromUtf8(python.readAllStandardOutput()).trimmed(), QStringLiteral("a,b=1|say \"hi\"=2|train/loss=-0.5"));
    }

    void resumeAppendsWithoutASecondHeader()
    {
        QTemporaryDir dir;
        {
            ScalarRecorder first;
            QVERIFY(first.open(dir.path()));
            QVERIFY(first.append(batch(1, {{QStringLiteral("loss"), 1.0}}), 10.0));
        }
        ScalarRecorder second;
        QVERIFY(second.open(dir.path()));
        QVERIFY(second.append(batch(2, {{QStringLiteral("loss"), 0.5}}), 20.0));
        QCOMPARE(linesOf(second.path()), (QStringList{QStringLiteral("step,wall_time,name,value"), QStringLiteral("1,10.000,loss,1"),
                                                      QStringLiteral("2,20.000,loss,0.5"), QString()}));
    }

    void aRowCutShortDoesNotSwallowTheNext()
    {
        QTemporaryDir dir;
        QFile cut(dir.filePath(QStringLiteral("scalars.csv")));
        QVERIFY(cut.open(QIODevice::WriteOnly));
        cut.write("step,wall_time,name,value\n1,10.000,loss,1\n2,20.0");
        cut.close();
        ScalarRecorder recorder;
        QVERIFY(recorder.open(dir.path()));
        QVERIFY(recorder.append(batch(3, {{QStringLiteral("loss"), 0.25}}), 30.0));
        const QStringList lines = linesOf(recorder.path());
        QCOMPARE(lines.size(), 5);
        QCOMPARE(lines.at(3), QStringLiteral("3,30.000,loss,0.25"));
    }

    void wallTimeIsUnixTime()
    {
        QTemporaryDir dir;
        ScalarRecorder recorder;
        QVERIFY(recorder.open(dir.path()));
        const double before = static_cast<double>(QDateTime::currentMSecsSinceEpoch()) / 1000.0;
        QVERIFY(recorder.append(batch(1, {{QStringLiteral("x"), 1.0}})));
        const double stamped = linesOf(recorder.path()).at(1).section(QLatin1Char(','), 1, 1).toDouble();
        QVERIFY2(stamped >= before - 0.001 && stamped < before + 60, qPrintable(QString::number(stamped, 'f', 3)));
    }

    void trainerMetricsAsScalars()
    {
        StepMetric step;
        step.step = 12;
        step.epoch = 1;
        step.loss = 0.25;
        step.lr = 0.01;
        step.samplesPerSec = 7000.5;
        const ScalarBatch fromStep = scalarsOf(step);
        QCOMPARE(fromStep.step, 12);
        QStringList rendered;
        for (const auto& s : fromStep.values) rendered << s.name + QLatin1Char('=') + QString::number(s.value);
        QCOMPARE(rendered, (QStringList{QStringLiteral("loss=0.25"), QStringLiteral("lr=0.01"), QStringLiteral("samples_per_sec=7000.5"),
                                        QStringLiteral("epoch=1")}));
        EvalMetric eval;
        eval.step = 40;
        eval.valLoss = 0.5;
        eval.valAccuracy = std::nan(""); // a regression model
        const ScalarBatch fromEval = scalarsOf(eval);
        QCOMPARE(fromEval.step, 40);
        QCOMPARE(fromEval.values.size(), 1);
        QCOMPARE(fromEval.values.first().name, QStringLiteral("val_loss"));
        eval.valAccuracy = 0.875;
        QCOMPARE(scalarsOf(eval).values.last().name, QStringLiteral("val_accuracy"));
        QCOMPARE(scalarsOf(eval).values.last().value, 0.875);
    }

    void unwritableFolderIsAnError()
    {
        ScalarRecorder recorder;
        QVERIFY(!recorder.open(QStringLiteral("/proc/no-such-run")));
        QVERIFY2(recorder.error().contains(QStringLiteral("/proc/no-such-run/scalars.csv")), qPrintable(recorder.error()));
        QVERIFY(!recorder.append(batch(1, {{QStringLiteral("x"), 1.0}})));
    }
};

QTEST_GUILESS_MAIN(TestScalarRecorder)
#include "tst_scalar_recorder.moc"
