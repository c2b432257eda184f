#include "client/wmctl/completion.h"

#include "absl/strings/str_replace.h"

namespace wm::wmctl {
namespace {

// Every script asks `wmctl __complete` with the words up to the cursor and
// completes file names when it exits @FILES@. They run the wmctl being
// completed (the first word as typed), so a wmctl outside $PATH completes
// with itself.

constexpr char kBash[] = R"(# bash completion for wmctl. Load it into the current shell:
#   source <(wmctl completion bash)
# or install it for every shell:
#   wmctl completion bash > /etc/bash_completion.d/wmctl
_wmctl() {
  # The words up to the cursor, split at blanks only: bash's COMP_WORDS are
  # also split at = and : (COMP_WORDBREAKS), which would cut addresses.
  local line=${COMP_LINE:0:COMP_POINT}
  local -a words
  read -r -a words <<<"$line"
  if [[ $line == *[[:space:]] ]]; then words+=(""); fi
  local cur=${words[${#words[@]}-1]}
  local out code
  out=$("${words[0]}" __complete "${words[@]:1}" 2>/dev/null)
  code=$?
  COMPREPLY=()
  if ((code == @FILES@)); then
    local flag="" value=$cur
    if [[ $cur == -*=* ]]; then
      flag=${cur%%=*}=
      value=${cur#*=}
    fi
    compopt -o filenames 2>/dev/null
    mapfile -t COMPREPLY < <(compgen -f -- "$value")
    COMPREPLY=("${COMPREPLY[@]/#/$flag}")
  elif ((code == 0)) && [[ -n $out ]]; then
    mapfile -t COMPREPLY <<<"$out"
  fi
  # bash replaces only its own last word (what follows an = or a :): drop
  # what comes before it from the candidates.
  local prefix=${cur%"${COMP_WORDS[COMP_CWORD]}"}
  if [[ -n $prefix && ${#COMPREPLY[@]} -gt 0 ]]; then
    COMPREPLY=("${COMPREPLY[@]#"$prefix"}")
  fi
  return 0
}
complete -F _wmctl wmctl
)";

constexpr char kZsh[] = R"(#compdef wmctl
# zsh completion for wmctl. Load it into the current shell (after compinit):
#   source <(wmctl completion zsh)
# or install it as _wmctl in a directory of $fpath:
#   wmctl completion zsh > "${fpath[1]}/_wmctl"
_wmctl() {
  local out code
  out=$("${words[1]}" __complete "${(@)words[2,CURRENT]}" 2>/dev/null)
  code=$?
  if ((code == @FILES@)); then
    [[ $PREFIX == -*=* ]] && compset -P '*='
    _files
    return
  fi
  ((code == 0)) || return 1
  local -a candidates
  candidates=(${(f)out})
  compadd -- "${candidates[@]}"
}
if [[ $funcstack[1] == _wmctl ]]; then
  _wmctl "$@"
else
  compdef _wmctl wmctl
fi
)";

constexpr char kFish[] = R"(# fish completion for wmctl. Load it into the current shell:
#   wmctl completion fish | source
# or install it:
#   wmctl completion fish > ~/.config/fish/completions/wmctl.fish
function __wmctl_complete
    set -l words (commandline -opc)
    set -l current (commandline -ct)
    set -l wmctl $words[1]
    set -e words[1]
    set -l out ($wmctl __complete $words $current 2>/dev/null)
    set -l code $status
    if test $code -eq @FILES@
        # --flag=PATH: complete the path, keep the flag.
        set -l flag (string match -r -- '^-[^=]*=' $current)
        set -l value (string replace -r -- '^-[^=]*=' '' $current)
        for path in (__fish_complete_path $value)
            printf '%s%s\n' "$flag" $path
        end
    else if test $code -eq 0; and set -q out[1]
        printf '%s\n' $out
    end
end
complete -c wmctl -f -a '(__wmctl_complete)'
)";

}  // namespace

std::string CompletionScript(absl::string_view shell) {
  const char* script = shell == "bash"   ? kBash
                       : shell == "zsh"  ? kZsh
                       : shell == "fish" ? kFish
                                         : nullptr;
  if (script == nullptr) return "";
  return absl::StrReplaceAll(script, {{"@FILES@", std::to_string(kCompleteFilesExit)}});
}

}  // namespace wm::wmctl
