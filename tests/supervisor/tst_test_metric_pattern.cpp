// ringmaster-launch --test-metric-pattern, called as the launcher calls it, on text buffers: what it
// prints for the lines that give scalars, the JSON form, user patterns, and bad input (exit 2, one line).
#include <QTest>
#include <QTextStream>

#include "cli/test_metric_pattern.h"

using namespace ringmaster::cli;

namespace {

struct Result
{
    int code = -1;
    QString out;
    QString err;
};

Result run(const QStringList& arguments, QString input)
{
    Result result;
    QTextStream in(&input, QIODevice::ReadOnly);
    QTextStream out(&result.out, QIODevice::WriteOnly);
    QTextStream err(&result.err, QIODevice::WriteOnly);
    result.code = runTestMetricPattern(arguments, in, out, err);
    out.flush();
    err.flush();
    return result;
}

const QString kScriptOutput = QStringLiteral("[rank 0] world size 2\n"
                                             "epoch 0 step 10 loss: 2.5 lr=0.1\n"
                                             "12:30:45 saving\n"
                                             "val_loss=1.25\n");

} // namespace

class TestTestMetricPattern : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void recognisesTheFlagBeforeTheScriptArguments()
    {
        QVERIFY(isTestMetricPatternRequest({QStringLiteral("--test-metric-pattern")}));
        QVERIFY(isTestMetricPatternRequest({QStringLiteral("--metric-pattern"), QStringLiteral("x"), QStringLiteral("--test-metric-pattern")}));
        QVERIFY(!isTestMetricPatternRequest({QStringLiteral("--script"), QStringLiteral("t.py"), QStringLiteral("--"),
                                             QStringLiteral("--test-metric-pattern")}));
        QVERIFY(!isTestMetricPatternRequest({QStringLiteral("--nproc"), QStringLiteral("2")}));
    }

    void defaultRules()
    {
        const Result r = run({QStringLiteral("--test-metric-pattern")}, kScriptOutput);
        QCOMPARE(r.code, 0);
        QCOMPARE(r.out, QStringLiteral("step 10: epoch=0 loss=2.5 lr=0.1\nstep 10: val_loss=1.25\n"));
        QCOMPARE(r.err, QStringLiteral("ringmaster-launch: 2 of 4 lines gave scalars\n"));
    }

    void json()
    {
        const Result r = run({QStringLiteral("--test-metric-pattern"), QStringLiteral("--json")}, kScriptOutput);
        QCOMPARE(r.code, 0);
        QCOMPARE(r.out, QStringLiteral("{\"step\":10,\"values\":{\"epoch\":0,\"loss\":2.5,\"lr\":0.1}}\n"
                                       "{\"step\":10,\"values\":{\"val_loss\":1.25}}\n"));
    }

    void userPatterns()
    {
        const Result r = run({QStringLiteral("--test-metric-pattern"), QStringLiteral("--metric-pattern"),
                              QStringLiteral(R"(step (?<step>\d+) loss: (?<loss>\S+))"),
                              QStringLiteral("--metric-pattern=saving (?<saved>\\d+)")},
                             kScriptOutput + QStringLiteral("saving 3\n"));
        QCOMPARE(r.code, 0);
        QCOMPARE(r.out, QStringLiteral("step 10: loss=2.5\nstep 10: saved=3\n"));
        const Result none = run({QStringLiteral("--metric-pattern"), QStringLiteral("none"), QStringLiteral("--test-metric-pattern")}, kScriptOutput);
        QCOMPARE(none.code, 0);
        QCOMPARE(none.out, QString());
        QVERIFY2(none.err.contains(QStringLiteral("metric parsing is off")), qPrintable(none.err));
    }

    void badInputExits2WithOneLine()
    {
        const Result invalid = run({QStringLiteral("--test-metric-pattern"), QStringLiteral("--metric-pattern"), QStringLiteral("loss (?<loss>")},
                                   kScriptOutput);
        QCOMPARE(invalid.code, 2);
        QCOMPARE(invalid.out, QString());
        QCOMPARE(invalid.err.count(QLatin1Char('\n')), 1);
        QVERIFY2(invalid.err.startsWith(QStringLiteral("ringmaster-launch: error: --metric-pattern 'loss (?<loss>' is not a valid regular expression")),
                 qPrintable(invalid.err));
        QVERIFY2(invalid.err.contains(QStringLiteral("at offset")), qPrintable(invalid.err));
        const Result missing = run({QStringLiteral("--test-metric-pattern"), QStringLiteral("--metric-pattern")}, kScriptOutput);
        QCOMPARE(missing.code, 2);
        QVERIFY2(missing.err.contains(QStringLiteral("needs a regular expression")), qPrintable(missing.err));
        const Result unknown = run({QStringLiteral("--test-metric-pattern"), QStringLiteral("--nproc")}, kScriptOutput);
        QCOMPARE(unknown.code, 2);
        QVERIFY2(unknown.err.contains(QStringLiteral("not '--nproc'")), qPrintable(unknown.err));
        QCOMPARE(unknown.out, QString());
    }
};

QTEST_GUILESS_MAIN(TestTestMetricPattern)
#include "tst_test_metric_pattern.moc"
