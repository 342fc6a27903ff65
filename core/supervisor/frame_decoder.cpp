#include "frame_decoder.h"

#include <QJsonDocument>
#include <QJsonParseError>

namespace ringmaster::supervisor {

FrameDecoder::FrameDecoder(int maxFrameBytes)
    : m_maxFrameBytes(maxFrameBytes)
{
}

QList<QJsonObject> FrameDecoder::feed(const QByteArray& bytes)
{
    QList<QJsonObject> frames;
    if (failed()) return frames;
    m_pending.append(bytes);
    qsizetype start = 0;
    while (true) {
        const qsizetype newline = m_pending.indexOf('\n', start);
        if (newline < 0) break;
        if (newline - start + 1 > m_maxFrameBytes) {
            m_error = QStringLiteral("frame of %1 bytes exceeds the %2-byte limit").arg(newline - start + 1).arg(m_maxFrameBytes);
            m_pending.clear();
            return frames;
        }
        QJsonParseError parseError{};
        const auto doc = QJsonDocument::fromJson(m_pending.mid(start, newline - start), &parseError);
        if (parseError.error != QJsonParseError::NoError || !doc.isObject()) {
            m_error = QStringLiteral("malformed frame: %1").arg(parseError.error != QJsonParseError::NoError
                                                                    ? parseError.errorString()
                                                                    : QStringLiteral("not a JSON object"));
            m_pending.clear();
            return frames;
        }
        frames.append(doc.object());
        start = newline + 1;
    }
    m_pending.remove(0, start);
    // What is pending still lacks its newline: at the limit already, the whole frame would exceed it.
    if (m_pending.size() >= m_maxFrameBytes) {
        m_error = QStringLiteral("unterminated frame exceeds the %1-byte limit").arg(m_maxFrameBytes);
        m_pending.clear();
    }
    return frames;
}

} // namespace ringmaster::supervisor
