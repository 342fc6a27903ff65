#include "supervisor/frame_decoder.h"

#include <QJsonDocument>
#include <QJsonParseError>

namespace ringmaster::supervisor {

FrameDecoder::FrameDecoder(int maxFrameBytes)
    : m_maxFrameBytes(maxFrameBytes)
{
}

QList<QByteArray> FrameDecoder::takeLines(const QByteArray& bytes)
{
    QList<QByteArray> lines;
    if (failed()) return lines;
    m_pending.append(bytes);
    qsizetype start = 0;
    while (true) {
        const qsizetype newline = m_pending.indexOf('\n', start);
        if (newline < 0) break;
        if (newline - start + 1 > m_maxFrameBytes) {
            fail(QStringLiteral("frame of %1 bytes exceeds the %2-byte limit").arg(newline - start + 1).arg(m_maxFrameBytes));
            return lines;
        }
        lines.append(m_pending.mid(start, newline - start));
        start = newline + 1;
    }
    m_pending.remove(0, start);
    // What is pending still lacks its newline: at the limit already, the whole frame would exceed it.
    if (m_pending.size() >= m_maxFrameBytes) fail(QStringLiteral("unterminated frame exceeds the %1-byte limit").arg(m_maxFrameBytes));
    return lines;
}

bool FrameDecoder::parseFrame(const QByteArray& line, QJsonObject* frame, QString* error)
{
    QJsonParseError parseError{};
    const auto doc = QJsonDocument::fromJson(line, &parseError);
    if (parseError.error != QJsonParseError::NoError || !doc.isObject()) {
        *error = QStringLiteral("malformed frame: %1").arg(parseError.error != QJsonParseError::NoError ? parseError.errorString()
                                                                                                        : QStringLiteral("not a JSON object"));
        return false;
    }
    *frame = doc.object();
    return true;
}

QList<QJsonObject> FrameDecoder::feed(const QByteArray& bytes)
{
    QList<QJsonObject> frames;
    for (const QByteArray& line : takeLines(bytes)) {
        QJsonObject frame;
        QString error;
        if (!parseFrame(line, &frame, &error)) {
            fail(error);
            return frames;
        }
        frames.append(frame);
    }
    return frames;
}

} // namespace ringmaster::supervisor
