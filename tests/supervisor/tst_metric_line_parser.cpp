// MetricLineParser on lines that real training scripts print (torchrun primers, the PyTorch tutorials,
// Hugging Face, Lightning, Keras-style, tqdm, spdlog and Python logging prefixes): which scalars, at
// which step, and what must never become one (clock times, dates, ranks, versions, addresses).
#include <QTest>

#include "supervisor/metric_line_parser.h"

using namespace ringmaster::supervisor;

namespace {

// "step S: a=1 b=2" for a parsed line, "-" for a line without scalars (readable in a failure).
QString render(MetricLineParser& parser, const QString& line)
{
    ScalarBatch batch;
    if (!parser.parseLine(line, &batch)) return QStringLiteral("-");
    QStringList parts;
    for (const auto& scalar : batch.values) parts << scalar.name + QLatin1Char('=') + QString::number(scalar.value, 'g', 17);
    return QStringLiteral("step %1: %2").arg(batch.step).arg(parts.join(QLatin1Char(' ')));
}

} // namespace

class TestMetricLineParser : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void defaultRules_data()
    {
        QTest::addColumn<QString>("line");
        QTest::addColumn<QString>("expected");
        // Each row is parsed by a parser that has already seen "step 7", so a line without a step is step 7.
        QTest::newRow("colon pair") << "loss: 0.1234" << "step 7: loss=0.1234";
        QTest::newRow("equals pair") << "loss=0.1234" << "step 7: loss=0.1234";
        QTest::newRow("spaced equals") << "loss = 0.5" << "step 7: loss=0.5";
        QTest::newRow("step word") << "step 20 loss=0.25 lr=0.01" << "step 20: loss=0.25 lr=0.01";
        QTest::newRow("step colon") << "step: 20, loss: 0.25" << "step 20: loss=0.25";
        QTest::newRow("step equals") << "step=20 loss=0.25" << "step 20: loss=0.25";
        QTest::newRow("iter") << "iter 300: loss 1.2 acc=0.5" << "step 300: acc=0.5";
        QTest::newRow("iteration") << "Iteration 12 | train/loss: 3.5e-2" << "step 12: train/loss=0.035000000000000003";
        QTest::newRow("epoch is a scalar") << "epoch 3 step 40 val_loss: 0.5" << "step 40: epoch=3 val_loss=0.5";
        QTest::newRow("word without colon is not a pair") << "Epoch 1 | step 20 | loss 0.1234" << "step 20: epoch=1";
        QTest::newRow("pytorch tutorial") << "Epoch [1/5], Step [100/600], Loss: 0.2345" << "step 100: epoch=1 Loss=0.23449999999999999";
        QTest::newRow("names with / . -") << "train/loss=1.5 val.acc: 0.9 lr-head=1e-3" << "step 7: train/loss=1.5 val.acc=0.90000000000000002 lr-head=0.001";
        QTest::newRow("exponents and signs") << "a=1E+3 b=-2.5e-4 c=+7 d=.5 e=5." << "step 7: a=1000 b=-0.00025000000000000001 c=7 d=0.5 e=5";
        QTest::newRow("nan and inf are not scalars") << "loss=nan grad_norm=inf lr=0.1" << "step 7: lr=0.10000000000000001";
        QTest::newRow("only nan") << "loss: nan" << "-";
        QTest::newRow("huggingface dict")
            << "{'loss': 0.4523, 'learning_rate': 4.5e-05, 'epoch': 0.27}" << "step 7: loss=0.45229999999999998 learning_rate=4.5000000000000003e-05 epoch=0.27000000000000002";
        QTest::newRow("json line") << R"({"step": 12, "loss": 0.5, "acc": 0.75})" << "step 12: loss=0.5 acc=0.75";
        QTest::newRow("keras style")
            << "469/469 [==============================] - 5s 10ms/step - loss: 0.4523 - accuracy: 0.8412 - val_loss: 0.38"
            << "step 7: loss=0.45229999999999998 accuracy=0.84119999999999995 val_loss=0.38";
        QTest::newRow("tqdm postfix")
            << "train:  45%|####5     | 45/100 [00:12<00:15,  3.61it/s, loss=0.234, lr=1e-3]" << "step 7: loss=0.23400000000000001 lr=0.001";
        QTest::newRow("tqdm rewritten with CR")
            << "Epoch 0:  10%|#   | 1/10 [00:01<00:09, loss=0.9]\rEpoch 0:  20%|##  | 2/10 [00:02<00:08, loss=0.8]"
            << "step 7: epoch=0 loss=0.80000000000000004";
        QTest::newRow("lightning bar")
            << "Epoch 0:  50%|#####     | 469/938 [00:10<00:10, 45.2it/s, v_num=0, train_loss_step=0.38]"
            << "step 7: epoch=0 v_num=0 train_loss_step=0.38";
        QTest::newRow("spdlog prefix") << "[2026-11-30 12:00:00.123] [info] step=10 loss=0.25" << "step 10: loss=0.25";
        QTest::newRow("rank prefix") << "[2026-11-30 12:00:00.123] [rank 0] [info] loss: 0.5" << "step 7: loss=0.5";
        QTest::newRow("python logging") << "2026-11-30 12:00:00,123 - INFO - step 10: loss=0.5" << "step 10: loss=0.5";
        QTest::newRow("logging root") << "INFO:root:loss: 0.5" << "step 7: loss=0.5";
        QTest::newRow("torchrun rank prefix") << "[rank0]:step 5 loss=0.1" << "step 5: loss=0.10000000000000001";
        QTest::newRow("colours stripped") << "\x1b[32mINFO\x1b[0m loss=0.5" << "step 7: loss=0.5";
        QTest::newRow("percent") << "acc: 93.5% done" << "step 7: acc=93.5";
        QTest::newRow("global_step is an ordinary name") << "global_step=100 loss=0.5" << "step 7: global_step=100 loss=0.5";
        QTest::newRow("quoted pair in a sentence") << R"(reached "loss: 0.5" at last)" << "step 7: loss=0.5";
        QTest::newRow("last value of a name wins") << "loss=1 loss=2" << "step 7: loss=2";
        // Never scalars.
        QTest::newRow("clock time") << "12:30:45" << "-";
        QTest::newRow("clock after a name") << "elapsed: 0:01:23" << "-";
        QTest::newRow("time prefix alone") << "[2026-11-30 12:00:00.123]" << "-";
        QTest::newRow("iso time") << "at 2026-11-30T12:00:00Z" << "-";
        QTest::newRow("date value") << "date: 2026-11-30" << "-";
        QTest::newRow("rank word") << "rank 0 ready, world size 2" << "-";
        QTest::newRow("version") << "torch version: 1.13.1" << "-";
        QTest::newRow("address") << "MASTER_ADDR=127.0.0.1" << "-";
        QTest::newRow("url") << "see http://localhost:6006/" << "-";
        QTest::newRow("unit glued") << "time: 12.3s" << "-";
        QTest::newRow("fraction") << "batch: 45/100" << "-";
        QTest::newRow("thousands") << "samples: 1,234" << "-";
        QTest::newRow("hex") << "addr=0x1f" << "-";
        QTest::newRow("traceback") << R"(  File "train.py", line 42, in <module>)" << "-";
        QTest::newRow("error") << "RuntimeError: CUDA out of memory. Tried to allocate 20.00 MiB (GPU 0; 7.93 GiB total capacity)" << "-";
        QTest::newRow("torchrun banner")
            << "WARNING:torch.distributed.run:Setting OMP_NUM_THREADS environment variable for each process to be 1" << "-";
        QTest::newRow("steps per second unit") << "10ms/step" << "-";
        QTest::newRow("empty") << "" << "-";
    }

    void defaultRules()
    {
        QFETCH(QString, line);
        QFETCH(QString, expected);
        MetricLineParser parser;
        QVERIFY(parser.enabled());
        QCOMPARE(render(parser, QStringLiteral("step 7")), QStringLiteral("-")); // sets the step, no scalars
        QCOMPARE(render(parser, line), expected);
    }

    void stepCarriesOverAndCountsWhenNeverSeen()
    {
        MetricLineParser parser;
        // No step word yet: the n-th line with scalars is step n; lines without scalars do not count.
        QCOMPARE(render(parser, QStringLiteral("loss: 0.9")), QStringLiteral("step 1: loss=0.90000000000000002"));
        QCOMPARE(render(parser, QStringLiteral("loading data")), QStringLiteral("-"));
        QCOMPARE(render(parser, QStringLiteral("loss: 0.8")), QStringLiteral("step 2: loss=0.80000000000000004"));
        // A step word on a line of its own sets the step of the lines that follow.
        QCOMPARE(render(parser, QStringLiteral("=== Step 100 ===")), QStringLiteral("-"));
        QCOMPARE(render(parser, QStringLiteral("loss: 0.7")), QStringLiteral("step 100: loss=0.69999999999999996"));
        QCOMPARE(render(parser, QStringLiteral("acc: 0.5")), QStringLiteral("step 100: acc=0.5"));
        QCOMPARE(render(parser, QStringLiteral("step 120 loss: 0.6")), QStringLiteral("step 120: loss=0.59999999999999998"));
        QCOMPARE(render(parser, QStringLiteral("val_loss: 0.65")), QStringLiteral("step 120: val_loss=0.65000000000000002"));
        QCOMPARE(parser.currentStep(), 120);
    }

    void torchrunScriptOutput()
    {
        // What a primer-style DDP script prints on rank 0, in order.
        const QStringList lines = {
            QStringLiteral("WARNING:torch.distributed.run:"),
            QStringLiteral("*****************************************"),
            QStringLiteral("[rank 0] initialised gloo, world size 2"),
            QStringLiteral("epoch 0 step 10 loss: 2.1"),
            QStringLiteral("epoch 0 step 20 loss: 1.9"),
            QStringLiteral("epoch 0 done in 12.5s, val_loss=1.8 val_acc=0.41"),
            QStringLiteral("epoch 1 step 30 loss: 1.7"),
        };
        MetricLineParser parser;
        QStringList got;
        for (const auto& line : lines) got << render(parser, line);
        QCOMPARE(got, (QStringList{QStringLiteral("-"), QStringLiteral("-"), QStringLiteral("-"),
                                   QStringLiteral("step 10: epoch=0 loss=2.1000000000000001"),
                                   QStringLiteral("step 20: epoch=0 loss=1.8999999999999999"),
                                   QStringLiteral("step 20: epoch=0 val_loss=1.8 val_acc=0.40999999999999998"),
                                   QStringLiteral("step 30: epoch=1 loss=1.7")}));
    }

    void userPatterns()
    {
        const QStringList patterns = {QStringLiteral(R"(it (?<step>\d+) .*loss (?<loss>\S+))"),
                                      QStringLiteral(R"(top1 (?<top1>[0-9.]+)%)")};
        QCOMPARE(MetricLineParser::checkPatterns(patterns), QString());
        MetricLineParser parser(patterns);
        QVERIFY(parser.enabled());
        QCOMPARE(render(parser, QStringLiteral("it 40 | loss 0.123 | top1 76.5%")), QStringLiteral("step 40: loss=0.123 top1=76.5"));
        // The default rules are replaced: a `name=number` pair is not captured.
        QCOMPARE(render(parser, QStringLiteral("lr=0.1")), QStringLiteral("-"));
        // A group whose text is not a finite number is skipped; the step carries over.
        QCOMPARE(render(parser, QStringLiteral("it 41 ... loss nan")), QStringLiteral("-"));
        QCOMPARE(render(parser, QStringLiteral("top1 80%")), QStringLiteral("step 41: top1=80"));
        // Every match on a line counts.
        MetricLineParser repeated({QStringLiteral(R"((?<x>\d+)ms)")});
        QCOMPARE(render(repeated, QStringLiteral("5ms then 7ms")), QStringLiteral("step 1: x=7"));
    }

    void patternNone()
    {
        QCOMPARE(MetricLineParser::checkPatterns({QStringLiteral("none")}), QString());
        MetricLineParser parser({QStringLiteral("none")});
        QVERIFY(!parser.enabled());
        QCOMPARE(render(parser, QStringLiteral("step 3 loss=0.5")), QStringLiteral("-"));
    }

    void badPatterns()
    {
        const QString unbalanced = MetricLineParser::checkPatterns({QStringLiteral("(?<loss>[0-9.]+")});
        QVERIFY2(unbalanced.contains(QStringLiteral("--metric-pattern '(?<loss>[0-9.]+'")), qPrintable(unbalanced));
        QVERIFY2(unbalanced.contains(QStringLiteral("not a valid regular expression")), qPrintable(unbalanced));
        QVERIFY2(unbalanced.contains(QStringLiteral("at offset 15")), qPrintable(unbalanced));
        const QString unnamed = MetricLineParser::checkPatterns({QStringLiteral(R"(loss (\S+))")});
        QVERIFY2(unnamed.contains(QStringLiteral("'loss (\\S+)' has no named group")), qPrintable(unnamed));
        const QString mixed = MetricLineParser::checkPatterns({QStringLiteral("none"), QStringLiteral("(?<a>1)")});
        QVERIFY2(mixed.contains(QStringLiteral("cannot be combined")), qPrintable(mixed));
        // The first bad one is named even after good ones.
        const QString second = MetricLineParser::checkPatterns({QStringLiteral("(?<a>1)"), QStringLiteral("[")});
        QVERIFY2(second.startsWith(QStringLiteral("--metric-pattern '['")), qPrintable(second));
    }

    void longLinesAreBounded()
    {
        MetricLineParser parser;
        QString line = QStringLiteral("loss=0.5 ");
        line += QString(kMaxScanChars, QLatin1Char('x')) + QStringLiteral(" late=1");
        QCOMPARE(render(parser, line), QStringLiteral("step 1: loss=0.5"));
        QString many;
        for (int i = 0; i < kMaxScalarsPerLine + 10; ++i) many += QStringLiteral("m%1=%1 ").arg(i);
        ScalarBatch batch;
        QVERIFY(parser.parseLine(many, &batch));
        QCOMPARE(batch.values.size(), kMaxScalarsPerLine);
    }
};

QTEST_GUILESS_MAIN(TestMetricLineParser)
#include "tst_metric_line_parser.moc"
