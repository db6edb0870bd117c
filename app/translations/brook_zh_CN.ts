<?xml version="1.0" encoding="utf-8"?>
<!DOCTYPE TS>
<TS version="2.1" language="zh_CN">
<context>
    <name></name>
    <message>
        <source>HelpDialogs</source>
        <comment>A desktop chat app for local language models. The words appear as fast as the model makes them, and Stop stops.</comment>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>HelpDialogs</source>
        <comment>Model</comment>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>HelpDialogs</source>
        <comment>Chats and models folder</comment>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>HelpDialogs</source>
        <comment>About Brook</comment>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>HelpDialogs</source>
        <comment>Keyboard shortcuts</comment>
        <translation type="unfinished"></translation>
    </message>
</context>
<context>
    <name>HelpDialogs</name>
    <message>
        <source>Send the message</source>
        <extracomment>(keys, what they do): listed in the shortcuts dialog; the window defines the same keys.</extracomment>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>New line in the message</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Stop the reply</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>New chat</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Search all chats</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Regenerate the last reply</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Copy the last reply</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Open a model file</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Model library</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Settings</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Focus the message box</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Larger / smaller text</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Reset the text size</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Rename the chat</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Delete the selected chat (in the chat list)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>This list</source>
        <translation type="unfinished"></translation>
    </message>
</context>
<context>
    <name>ModelLibraryDialog</name>
    <message>
        <source>Model</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Architecture</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Parameters</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Quantization</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Context</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Size</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Chat template</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Status</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Model library</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Change folder…</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Show in file manager</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Rescan</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Models</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Load</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Folder: %1</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Reading model headers…</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>yes</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>no</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>broken: %1</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>loaded</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>ok</source>
        <translation type="unfinished"></translation>
    </message>
    <message numerus="yes">
        <source>%n model(s)</source>
        <translation type="unfinished">
            <numerusform></numerusform>
        </translation>
    </message>
    <message numerus="yes">
        <source>%n broken</source>
        <translation type="unfinished">
            <numerusform></numerusform>
        </translation>
    </message>
    <message>
        <source>No GGUF files here yet. Put .gguf models in this folder, then Rescan.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Models folder</source>
        <translation type="unfinished"></translation>
    </message>
</context>
<context>
    <name>Presets</name>
    <message>
        <source>Focused and repeatable: facts, code, summaries, extraction.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>llama.cpp&apos;s defaults with temperature 0.7: everyday chat.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Varied and surprising: stories, brainstorming, names.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Precise</source>
        <extracomment>The names, for translation (the UI shows ``translate(&quot;Presets&quot;, name)``).</extracomment>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Balanced</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Creative</source>
        <translation type="unfinished"></translation>
    </message>
</context>
<context>
    <name>SearchPanel</name>
    <message>
        <source>Search all chats…</source>
        <extracomment>Typing pause before the query runs (ms).</extracomment>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Search all chats</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Search results</source>
        <translation type="unfinished"></translation>
    </message>
    <message numerus="yes">
        <source>%n message(s) found</source>
        <translation type="unfinished">
            <numerusform></numerusform>
        </translation>
    </message>
    <message>
        <source>Nothing found</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Search took %1 ms</source>
        <translation type="unfinished"></translation>
    </message>
</context>
<context>
    <name>SettingsHelp</name>
    <message>
        <source>Randomness. 0 always picks the most likely token; 0.7 is usual for chat; above 1 gets wild.</source>
        <extracomment>One-line explanation of each sampling parameter (tooltips, docs). Sources: llama.cpp ``tools/main/README.md``.</extracomment>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Nucleus sampling: keep the most likely tokens whose probabilities add up to this (0.95 = 95 %).</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Keep only the K most likely tokens before sampling (0 = no limit).</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Drop tokens less likely than this fraction of the most likely one (0.05 = 5 %).</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Penalise tokens already used recently (1.0 = off; 1.1 is a gentle nudge against loops).</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Longest reply, in tokens (about ¾ of a word each in English).</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Random seed. Set one to get the same reply again from the same prompt and settings.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Texts that end the reply when the model writes them (not shown).</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>CPU threads for the model (empty = llama.cpp&apos;s choice, usually the number of cores).</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Model layers run on the GPU (needs a GPU build of llama.cpp; -1 = all). 0 = CPU only.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Context window in tokens: how much of the chat the model sees. More needs more memory.</source>
        <translation type="unfinished"></translation>
    </message>
</context>
</TS>
