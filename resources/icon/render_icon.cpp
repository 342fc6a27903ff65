// ringmaster-render-icon SVG OUT_DIR SIZE...: draws the icon's SVG at each SIZE into
// OUT_DIR/SIZExSIZE/apps/ringmaster.png (hicolor's layout), at build time, so that every PNG in the
// package and the one compiled into the app come from the same SVG. A build tool; not installed.
#include <QDir>
#include <QGuiApplication>
#include <QImage>
#include <QPainter>
#include <QSvgRenderer>

#include <cstdio>

int main(int argc, char** argv)
{
    qputenv("QT_QPA_PLATFORM", "offscreen");
    QGuiApplication app(argc, argv);
    const QStringList args = QCoreApplication::arguments();
    if (args.size() < 4) {
        std::fputs("usage: ringmaster-render-icon SVG OUT_DIR SIZE...\n", stderr);
        return 2;
    }
    QSvgRenderer renderer(args.at(1));
    if (!renderer.isValid()) {
        std::fprintf(stderr, "ringmaster-render-icon: error: %s is not a readable SVG\n", qPrintable(args.at(1)));
        return 2;
    }
    for (const QString& sizeText : args.mid(3)) {
        bool ok = false;
        const int size = sizeText.toInt(&ok);
        if (!ok || size <= 0) {
            std::fprintf(stderr, "ringmaster-render-icon: error: bad size '%s'\n", qPrintable(sizeText));
            return 2;
        }
        QImage image(size, size, QImage::Format_ARGB32_Premultiplied);
        image.fill(Qt::transparent);
        QPainter painter(&image);
        painter.setRenderHint(QPainter::Antialiasing);
        renderer.render(&painter);
        painter.end();
        const QString dir = QStringLiteral("%1/%2x%2/apps").arg(args.at(2)).arg(size);
        QDir().mkpath(dir);
        if (!image.save(dir + QStringLiteral("/ringmaster.png"))) {
            std::fprintf(stderr, "ringmaster-render-icon: error: cannot write %s/ringmaster.png\n", qPrintable(dir));
            return 1;
        }
    }
    return 0;
}
