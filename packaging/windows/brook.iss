; Inno Setup 6 script for Brook: Brook-Setup-<version>.exe from the PyInstaller folder.
; Built by packaging/build.py on Windows, which passes the defines:
;   iscc /DAppVersion=0.1.0 /DSourceDir=dist\Brook /DIconFile=build\icons\brook.ico /Odist packaging\windows\brook.iss
; Per-user install by default (no administrator prompt; the setup offers "all users" too), a Start-menu entry,
; an optional desktop icon, and an uninstaller that keeps the user's chats and settings unless asked.

#ifndef AppVersion
  #define AppVersion "0.0.0"
#endif
#ifndef SourceDir
  #define SourceDir "..\..\dist\Brook"
#endif
#ifndef IconFile
  #define IconFile "..\..\build\icons\brook.ico"
#endif

[Setup]
; AppId identifies Brook to Windows across versions: never change it.
AppId={{7B4275A8-7A66-468F-AF62-80CF0577FCBC}
AppName=Brook
AppVersion={#AppVersion}
AppVerName=Brook {#AppVersion}
AppPublisher=Brook developers
DefaultDirName={autopf}\Brook
DefaultGroupName=Brook
DisableProgramGroupPage=yes
PrivilegesRequired=lowest
PrivilegesRequiredOverridesAllowed=dialog
ArchitecturesAllowed=x64compatible
ArchitecturesInstallIn64BitMode=x64compatible
OutputBaseFilename=Brook-Setup-{#AppVersion}
SetupIconFile={#IconFile}
UninstallDisplayIcon={app}\Brook.exe
UninstallDisplayName=Brook
Compression=lzma2/max
SolidCompression=yes
WizardStyle=modern

[Languages]
Name: "english"; MessagesFile: "compiler:Default.isl"

[Tasks]
Name: "desktopicon"; Description: "{cm:CreateDesktopIcon}"; GroupDescription: "{cm:AdditionalIcons}"; Flags: unchecked

[Files]
Source: "{#SourceDir}\*"; DestDir: "{app}"; Flags: ignoreversion recursesubdirs createallsubdirs

[Icons]
Name: "{autoprograms}\Brook"; Filename: "{app}\Brook.exe"; Comment: "Chat with a local language model"
Name: "{autodesktop}\Brook"; Filename: "{app}\Brook.exe"; Tasks: desktopicon

[Run]
Filename: "{app}\Brook.exe"; Description: "{cm:LaunchProgram,Brook}"; Flags: nowait postinstall skipifsilent

[Code]
// Chats, settings and logs live in %LOCALAPPDATA%\Brook (platformdirs' user data/config folders). The
// uninstaller removes them only when the user says yes; a silent uninstall always keeps them.
procedure CurUninstallStepChanged(CurUninstallStep: TUninstallStep);
var
  DataDir: String;
begin
  if CurUninstallStep = usPostUninstall then
  begin
    DataDir := ExpandConstant('{localappdata}\Brook');
    if DirExists(DataDir) and not UninstallSilent() then
      if MsgBox('Also delete your Brook chats, settings and logs?' #13#10 + DataDir,
                mbConfirmation, MB_YESNO or MB_DEFBUTTON2) = IDYES then
        DelTree(DataDir, True, True, True);
  end;
end;
