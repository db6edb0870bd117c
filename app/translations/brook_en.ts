<?xml version="1.0" encoding="utf-8"?>
<!DOCTYPE TS>
<TS version="2.1" language="en">
<context>
    <name>ChatCommands</name>
    <message numerus="yes">
        <source>Imported %n chat(s)</source>
        <translation>
            <numerusform>Imported %n chat</numerusform>
            <numerusform>Imported %n chats</numerusform>
        </translation>
    </message>
    <message numerus="yes">
        <source>%n already in the history skipped</source>
        <translation>
            <numerusform>%n already in the history skipped</numerusform>
            <numerusform>%n already in the history skipped</numerusform>
        </translation>
    </message>
</context>
<context>
    <name>ChatSidebar</name>
    <message numerus="yes">
        <source>%n chat(s)</source>
        <translation>
            <numerusform>%n chat</numerusform>
            <numerusform>%n chats</numerusform>
        </translation>
    </message>
    <message numerus="yes">
        <source>Deleted the folder “%1”; its %n chat(s) are kept</source>
        <translation>
            <numerusform>Deleted the folder “%1”; its %n chat is kept</numerusform>
            <numerusform>Deleted the folder “%1”; its %n chats are kept</numerusform>
        </translation>
    </message>
</context>
<context>
    <name>ContextMeter</name>
    <message numerus="yes">
        <source>%n old message(s) left out</source>
        <translation>
            <numerusform>%n old message left out</numerusform>
            <numerusform>%n old messages left out</numerusform>
        </translation>
    </message>
</context>
<context>
    <name>ModelHubDialog</name>
    <message numerus="yes">
        <source>%n model(s) found</source>
        <translation>
            <numerusform>%n model found</numerusform>
            <numerusform>%n models found</numerusform>
        </translation>
    </message>
    <message numerus="yes">
        <source>%n GGUF file(s); memory for a %1-token context, against this machine&apos;s %2</source>
        <translation>
            <numerusform>%n GGUF file; memory for a %1-token context, against this machine&apos;s %2</numerusform>
            <numerusform>%n GGUF files; memory for a %1-token context, against this machine&apos;s %2</numerusform>
        </translation>
    </message>
</context>
<context>
    <name>ModelLibraryDialog</name>
    <message numerus="yes">
        <source>%n model(s)</source>
        <translation>
            <numerusform>%n model</numerusform>
            <numerusform>%n models</numerusform>
        </translation>
    </message>
    <message numerus="yes">
        <source>%n broken</source>
        <translation>
            <numerusform>%n broken</numerusform>
            <numerusform>%n broken</numerusform>
        </translation>
    </message>
</context>
<context>
    <name>SearchPanel</name>
    <message numerus="yes">
        <source>%n chat title(s)</source>
        <translation>
            <numerusform>%n chat title</numerusform>
            <numerusform>%n chat titles</numerusform>
        </translation>
    </message>
    <message numerus="yes">
        <source>%n message(s) found</source>
        <translation>
            <numerusform>%n message found</numerusform>
            <numerusform>%n messages found</numerusform>
        </translation>
    </message>
</context>
<context>
    <name>Sending</name>
    <message numerus="yes">
        <source>%n message(s) waiting: sent when the reply ends</source>
        <translation>
            <numerusform>%n message waiting: sent when the reply ends</numerusform>
            <numerusform>%n messages waiting: sent when the reply ends</numerusform>
        </translation>
    </message>
</context>
</TS>
