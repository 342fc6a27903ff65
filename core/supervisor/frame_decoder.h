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
    bool failed() const { return !m_error.isEmpty(); }
    QString error() const { return m_error; }

private:
    int m_maxFrameBytes;
    QByteArray m_pending;
    QString m_error;
};

} // namespace ringmaster::supervisor
