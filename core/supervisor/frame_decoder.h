#pragma once
// Splits a byte stream into newline-delimited JSON frames (core/protocol/wire.h) and enforces the
// maximum frame size. Bytes in, frames out; no I/O, so it is tested on its own.

#include <QByteArray>
#include <QJsonObject>
#include <QList>
#include <QString>

namespace ringmaster::supervisor {

class FrameDecoder
{
public:
    explicit FrameDecoder(int maxFrameBytes);

    // Appends bytes; returns the complete frames. After an error, nothing more is decoded.
    QList<QJsonObject> feed(const QByteArray& bytes);
    // The same, one level down: the complete lines (without their newline), for a transport whose lines carry
    // more than the JSON (the TCP endpoint's MACs). The size limit applies alike.
    QList<QByteArray> takeLines(const QByteArray& bytes);
    // One line as a JSON object; false with *error set ("malformed frame: ...").
    static bool parseFrame(const QByteArray& line, QJsonObject* frame, QString* error);
    // Marks the stream failed (a transport's own check), so that nothing more is decoded.
    void fail(const QString& error) { m_error = error; m_pending.clear(); }
    bool failed() const { return !m_error.isEmpty(); }
    QString error() const { return m_error; }

private:
    int m_maxFrameBytes;
    QByteArray m_pending;
    QString m_error;
};

} // namespace ringmaster::supervisor
