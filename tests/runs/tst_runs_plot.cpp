// ringmaster-runs plot as a user runs it, with no display: two runs overlaid in a PNG of the requested size
// (not blank, each run in its own colour of the chart's palette), an SVG that is well-formed XML with the
// legend "run · name" and draws the same colours, a PDF; the flags change the picture; every kind of bad
// input is one line on stderr, exit 2, and no file. list stays a QCoreApplication (no platform plugin).
#include <QDir>
#include <QFileInfo>
#include <QImage>
#include <QPainter>
#include <QProcess>
#include <QSvgRenderer>
#include <QTemporaryDir>
#include <QTest>
#include <QXmlStreamReader>

#include <cmath>
#include <functional>

#include "run_fixture.h"

using namespace ringmaster::runs::test;

namespace {

constexpr int kProcessTimeoutMs = 120000;
constexpr int kSteps = 200;
constexpr int kEvalEvery = 20;
// ui/charts/scalar_panel.cpp's palette: the first series of a panel is drawn blue, the second orange.
const QColor kFirstSeriesColour(31, 119, 180);
const QColor kSecondSeriesColour(255, 127, 14);
constexpr int kColourTolerance = 12;
constexpr int kMinLinePixels = 300; // a 2-pixel line across a few hundred pixels
constexpr int kWhiteLevel = 250;

struct Result
{
    int exitCode = -1;
    QString out;
    QString err;
};

// Runs ringmaster-runs with no display and no platform chosen, as on a headless server.
Result runsCli(const QStringList& arguments, const QProcessEnvironment& extra = {})
{
    QProcess process;
    QProcessEnvironment environment = QProcessEnvironment::systemEnvironment();
    for (const char* name : {"QT_QPA_PLATFORM", "DISPLAY", "WAYLAND_DISPLAY"}) environment.remove(QString::fromLatin1(name));
    for (const QString& key : extra.keys()) environment.insert(key, extra.value(key));
    process.setProcessEnvironment(environment);
    process.start(qEnvironmentVariable("RINGMASTER_RUNS"), arguments);
    Result result;
    if (!process.waitForFinished(kProcessTimeoutMs) || process.exitStatus() != QProcess::NormalExit) return result;
    result.exitCode = process.exitCode();
    result.out = QString::fromUtf8(process.readAllStandardOutput());
    result.err = QString::fromUtf8(process.readAllStandardError());
    return result;
}

// A run directory with only scalars.csv (as a script run leaves it): loss = LOSS(step), lr, and an
// evaluation every kEvalEvery steps; wall time 0.5 s a step from START.
QString makeScalarRun(const QString& root, const QString& name, const std::function<double(int)>& loss, double start)
{
    QByteArray csv = "step,wall_time,name,value\n";
    for (int step = 1; step <= kSteps; ++step) {
        const QByteArray prefix = QByteArray::number(step) + ',' + QByteArray::number(start + step * 0.5, 'f', 3) + ',';
        csv += prefix + "loss," + QByteArray::number(loss(step), 'g', 17) + '\n';
        csv += prefix + "lr," + QByteArray::number(0.1 * (1.0 - step / double(kSteps)), 'g', 17) + '\n';
        if (step % kEvalEvery == 0) csv += prefix + "val/accuracy," + QByteArray::number(0.5 + step / 500.0, 'g', 17) + '\n';
    }
    const QString dir = root + QLatin1Char('/') + name;
    writeFile(dir + QStringLiteral("/scalars.csv"), csv);
    return dir;
}

int countColour(const QImage& image, const QColor& colour)
{
    int count = 0;
    for (int y = 0; y < image.height(); ++y) {
        for (int x = 0; x < image.width(); ++x) {
            const QColor pixel = image.pixelColor(x, y);
            if (std::abs(pixel.red() - colour.red()) <= kColourTolerance && std::abs(pixel.green() - colour.green()) <= kColourTolerance &&
                std::abs(pixel.blue() - colour.blue()) <= kColourTolerance) {
                ++count;
            }
        }
    }
    return count;
}

int countNonWhite(const QImage& image)
{
    int count = 0;
    for (int y = 0; y < image.height(); ++y) {
        for (int x = 0; x < image.width(); ++x) {
            const QColor pixel = image.pixelColor(x, y);
            if (pixel.red() < kWhiteLevel || pixel.green() < kWhiteLevel || pixel.blue() < kWhiteLevel) ++count;
        }
    }
    return count;
}

} // namespace

class TestRunsPlot : public QObject
{
    Q_OBJECT

    QTemporaryDir m_root;
    QString m_runA, m_runB;

private Q_SLOTS:
    void initTestCase()
    {
        QVERIFY2(QFileInfo(qEnvironmentVariable("RINGMASTER_RUNS")).isExecutable(), "set RINGMASTER_RUNS");
        m_runA = makeScalarRun(m_root.path(), QStringLiteral("run-a"), [](int s) { return 2.0 * std::exp(-s / 60.0) + 0.1 * std::sin(s); }, 1796049634.0);
        m_runB = makeScalarRun(m_root.path(), QStringLiteral("run-b"), [](int s) { return 1.5 * std::exp(-s / 120.0) + 0.05 * std::cos(3.0 * s); },
                               1796053234.0);
    }

    void pngOfTwoRunsHasTheSizeAndBothColours()
    {
        const QString png = m_root.filePath(QStringLiteral("two.png"));
        const Result r = runsCli({QStringLiteral("plot"), m_runA, m_runB, QStringLiteral("--out"), png, QStringLiteral("--size"), QStringLiteral("900,600")});
        QCOMPARE(r.err, QString()); // nothing on stderr, not even Qt's notices of a headless machine
        QCOMPARE(r.exitCode, 0);
        QCOMPARE(r.out, QStringLiteral("wrote %1 (loss of 2 runs, 900x600)\n").arg(png));
        const QImage image(png);
        QVERIFY(!image.isNull());
        QCOMPARE(image.size(), QSize(900, 600));
        QVERIFY2(countNonWhite(image) > 10 * kMinLinePixels, qPrintable(QString::number(countNonWhite(image))));
        const int first = countColour(image, kFirstSeriesColour), second = countColour(image, kSecondSeriesColour);
        QVERIFY2(first > kMinLinePixels && second > kMinLinePixels, qPrintable(QStringLiteral("blue %1, orange %2").arg(first).arg(second)));
        QVERIFY(QDir(m_root.path()).entryList({QStringLiteral("two.png*")}, QDir::Files | QDir::Hidden).size() == 1); // no temp file left
    }

    void oneRunDrawsOneColourAtTheDefaultSize()
    {
        const QString png = m_root.filePath(QStringLiteral("one.png"));
        const Result r = runsCli({QStringLiteral("plot"), m_runA, QStringLiteral("--out"), png});
        QCOMPARE(r.exitCode, 0);
        const QImage image(png);
        QCOMPARE(image.size(), QSize(1200, 800));
        QVERIFY(countColour(image, kFirstSeriesColour) > kMinLinePixels);
        QCOMPARE(countColour(image, kSecondSeriesColour), 0);
    }

    void svgIsXmlWithTheLegendAndTheLines()
    {
        const QString svg = m_root.filePath(QStringLiteral("two.svg"));
        const Result r = runsCli({QStringLiteral("plot"), m_runA, m_runB, QStringLiteral("--out"), svg, QStringLiteral("--metric"), QStringLiteral("loss"),
                                  QStringLiteral("--metric"), QStringLiteral("val/accuracy"), QStringLiteral("--x"), QStringLiteral("time")});
        QCOMPARE(r.exitCode, 0);
        QCOMPARE(r.out, QStringLiteral("wrote %1 (loss, val/accuracy of 2 runs, 1200x800)\n").arg(svg));
        QFile file(svg);
        QVERIFY(file.open(QIODevice::ReadOnly));
        QXmlStreamReader xml(&file);
        QStringList texts;
        while (!xml.atEnd()) {
            if (xml.readNext() == QXmlStreamReader::Characters && !xml.isWhitespace()) texts << xml.text().toString().trimmed();
        }
        QVERIFY2(!xml.hasError(), qPrintable(xml.errorString()));
        for (const char* legend : {"run-a · loss", "run-b · loss", "run-a · val/accuracy", "run-b · val/accuracy", "scalars", "val", "wall time (s)"}) {
            QVERIFY2(texts.contains(QString::fromUtf8(legend)), legend);
        }
        QVERIFY(!texts.contains(QStringLiteral("run-a · lr"))); // only the metrics asked for
        QVERIFY(!texts.contains(QStringLiteral("step")));        // --x time
        // Drawn, not only labelled: rendered back, both runs' colours are there.
        QSvgRenderer renderer(svg);
        QVERIFY(renderer.isValid());
        QCOMPARE(renderer.viewBox(), QRect(0, 0, 1200, 800)); // pixels (its width and height are in mm at 96 per inch)
        QImage image(renderer.viewBox().size(), QImage::Format_ARGB32);
        image.fill(Qt::white);
        QPainter painter(&image);
        renderer.render(&painter);
        painter.end();
        QVERIFY(countColour(image, kFirstSeriesColour) > kMinLinePixels);
        QVERIFY(countColour(image, kSecondSeriesColour) > kMinLinePixels);
    }

    void pdfIsAPdf()
    {
        const QString pdf = m_root.filePath(QStringLiteral("two.pdf"));
        const Result r = runsCli({QStringLiteral("plot"), m_runA, m_runB, QStringLiteral("--out"), pdf, QStringLiteral("--size"), QStringLiteral("960,480")});
        QCOMPARE(r.exitCode, 0);
        const QByteArray bytes = readFile(pdf);
        QVERIFY(bytes.startsWith("%PDF-"));
        QVERIFY(bytes.trimmed().endsWith("%%EOF"));
        // 960x480 pixels at 96 per inch: a 720x360-point page.
        const auto box = bytes.indexOf("/MediaBox");
        QVERIFY(box >= 0);
        QCOMPARE(bytes.mid(box, bytes.indexOf(']', box) + 1 - box), QByteArray("/MediaBox [0 0 720.000000 360.000000]"));
    }

    void smoothingChangesTheSmoothedLine()
    {
        const QString raw = m_root.filePath(QStringLiteral("raw.png")), smooth = m_root.filePath(QStringLiteral("smooth.png"));
        QCOMPARE(runsCli({QStringLiteral("plot"), m_runA, QStringLiteral("--out"), raw, QStringLiteral("--smoothing"), QStringLiteral("0")}).exitCode, 0);
        QCOMPARE(runsCli({QStringLiteral("plot"), m_runA, QStringLiteral("--out"), smooth, QStringLiteral("--smoothing=0.95")}).exitCode, 0);
        // With no smoothing the full-colour line follows every wiggle of the raw values: it is longer.
        const int rawLine = countColour(QImage(raw), kFirstSeriesColour), smoothLine = countColour(QImage(smooth), kFirstSeriesColour);
        QVERIFY2(rawLine > smoothLine * 1.2, qPrintable(QStringLiteral("smoothing 0: %1 px, 0.95: %2 px").arg(rawLine).arg(smoothLine)));
    }

    void otherCommandsNeedNoGuiPlatform()
    {
        // A platform plugin that does not exist aborts any QApplication; list must not build one.
        QProcessEnvironment bogus;
        bogus.insert(QStringLiteral("QT_QPA_PLATFORM"), QStringLiteral("no-such-platform"));
        const Result r = runsCli({QStringLiteral("list"), QStringLiteral("--root"), m_root.path()}, bogus);
        QCOMPARE(r.exitCode, 0);
        QVERIFY2(r.out.contains(QStringLiteral("run-a")), qPrintable(r.out + r.err));
    }

    void helpNamesThePlotFlags()
    {
        const Result r = runsCli({QStringLiteral("--help")});
        QCOMPARE(r.exitCode, 0);
        for (const char* flag : {"plot RUN...", "--metric NAME", "--x step|time", "--smoothing F", "--size W,H", ".svg", ".pdf"}) {
            QVERIFY2(r.out.contains(QString::fromLatin1(flag)), flag);
        }
    }

    void badInputIsOneLineAndExit2_data()
    {
        QTest::addColumn<QStringList>("arguments");
        QTest::addColumn<QString>("message");
        const QString run = QStringLiteral("ROOT/run-a"), out = QStringLiteral("--out"), png = QStringLiteral("ROOT/x.png");
        QTest::newRow("unknown metric") << QStringList{QStringLiteral("plot"), run, out, png, QStringLiteral("--metric"), QStringLiteral("accuracy")}
                                        << QStringLiteral("--metric accuracy: no run given has it: choose from loss, lr, val/accuracy");
        QTest::newRow("size not W,H") << QStringList{QStringLiteral("plot"), run, out, png, QStringLiteral("--size"), QStringLiteral("800x600")}
                                      << QStringLiteral("--size 800x600: expected WIDTH,HEIGHT in pixels, each 200 to 10000");
        QTest::newRow("size too small") << QStringList{QStringLiteral("plot"), run, out, png, QStringLiteral("--size"), QStringLiteral("50,50")}
                                        << QStringLiteral("--size 50,50: expected WIDTH,HEIGHT");
        QTest::newRow("smoothing too big") << QStringList{QStringLiteral("plot"), run, out, png, QStringLiteral("--smoothing"), QStringLiteral("1")}
                                           << QStringLiteral("--smoothing 1: expected a number from 0 (no smoothing) to 0.999");
        QTest::newRow("smoothing not a number") << QStringList{QStringLiteral("plot"), run, out, png, QStringLiteral("--smoothing"), QStringLiteral("lots")}
                                                << QStringLiteral("--smoothing lots: expected a number");
        QTest::newRow("bad x") << QStringList{QStringLiteral("plot"), run, out, png, QStringLiteral("--x"), QStringLiteral("epoch")}
                               << QStringLiteral("--x epoch: expected step or time");
        QTest::newRow("unwritable") << QStringList{QStringLiteral("plot"), run, out, QStringLiteral("ROOT/none/x.png")}
                                    << QStringLiteral("--out ROOT/none/x.png: cannot write it");
        QTest::newRow("unknown extension") << QStringList{QStringLiteral("plot"), run, out, QStringLiteral("ROOT/x.jpg")}
                                           << QStringLiteral("--out ROOT/x.jpg: unknown picture format: name it FILE.png, FILE.svg or FILE.pdf");
        QTest::newRow("not a run") << QStringList{QStringLiteral("plot"), run, QStringLiteral("ROOT/photos"), out, png}
                                   << QStringLiteral("ROOT/photos is not a run directory");
        QTest::newRow("no out") << QStringList{QStringLiteral("plot"), run} << QStringLiteral("plot: give the picture to write with --out FILE.png");
        QTest::newRow("no run") << QStringList{QStringLiteral("plot"), out, png} << QStringLiteral("plot: give at least one run directory");
        QTest::newRow("unknown flag") << QStringList{QStringLiteral("plot"), run, out, png, QStringLiteral("--dpi"), QStringLiteral("300")}
                                      << QStringLiteral("plot --dpi: unknown flag");
    }

    void badInputIsOneLineAndExit2()
    {
        QFETCH(QStringList, arguments);
        QFETCH(QString, message);
        QTemporaryDir root;
        makeScalarRun(root.path(), QStringLiteral("run-a"), [](int s) { return 1.0 / s; }, 1796049634.0);
        writeFile(root.filePath(QStringLiteral("photos/cat.png")), "png");
        for (QString& argument : arguments) argument.replace(QStringLiteral("ROOT"), root.path());
        message.replace(QStringLiteral("ROOT"), root.path());
        const QStringList before = QDir(root.path()).entryList(QDir::AllEntries | QDir::Hidden | QDir::NoDotAndDotDot);
        const Result r = runsCli(arguments);
        QCOMPARE(r.exitCode, 2);
        QCOMPARE(r.out, QString());
        QVERIFY2(r.err.startsWith(QStringLiteral("ringmaster-runs: error: ")) && r.err.contains(message), qPrintable(r.err));
        QCOMPARE(r.err.count(QLatin1Char('\n')), 1);
        QCOMPARE(QDir(root.path()).entryList(QDir::AllEntries | QDir::Hidden | QDir::NoDotAndDotDot), before); // nothing created
    }
};

QTEST_MAIN(TestRunsPlot) // a QGuiApplication: the SVG is rendered back, text and all
#include "tst_runs_plot.moc"
