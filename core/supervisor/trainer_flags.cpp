#include "supervisor/trainer_flags.h"

#include "protocol/trainer_options.h"

namespace ringmaster::supervisor {
namespace {

QJsonValue typed(const protocol::TrainerOption& option, const QString& text)
{
    if (!protocol::optionValueProblem(option, text.toStdString()).empty()) return text;
    bool flag = false;
    switch (option.type) {
    case protocol::OptionType::Integer: return QJsonValue(text.toLongLong());
    case protocol::OptionType::Real: return QJsonValue(text.toDouble());
    case protocol::OptionType::Boolean: protocol::parseOptionBoolean(text.toStdString(), &flag); return QJsonValue(flag);
    case protocol::OptionType::Text:
    case protocol::OptionType::Choice: break;
    }
    return text;
}

} // namespace

QString trainerKeyOf(const QString& flagOrKey)
{
    return QString::fromStdString(protocol::optionKeyOf(flagOrKey.toStdString()));
}

QString trainerFlagOf(const QString& key)
{
    return QString::fromStdString(protocol::optionFlagOf(key.toStdString()));
}

QJsonValue trainerDefault(const char* key)
{
    const protocol::TrainerOption& option = protocol::trainerOption(key);
    return typed(option, QString::fromUtf8(option.defaultValue));
}

QJsonValue typedTrainerValue(const QString& flagOrKey, const QString& text)
{
    const protocol::TrainerOption* option = protocol::findTrainerOption(flagOrKey.toStdString());
    return option ? typed(*option, text) : QJsonValue(text);
}

} // namespace ringmaster::supervisor
