# bash completion for kpkg                                  -*- shell-script -*-
# Installed as share/bash-completion/completions/kpkg. Self-contained: it needs no
# bash-completion helpers. tests/cli/test_docs.cpp checks it against `kpkg __spec`.

# The subcommands of a command path ("kpkg", "kpkg catalog", ...), into __kpkg_subs.
# (Variables rather than output: no subshell per word.)
__kpkg_subcommands() {
    case $1 in
        "kpkg") __kpkg_subs="bundle catalog package resolve plan upgrade-path apply delete install build push pull image cache version completion help" ;;
        "kpkg bundle") __kpkg_subs="inspect validate render" ;;
        "kpkg catalog") __kpkg_subs="list validate render diff graph" ;;
        "kpkg catalog list") __kpkg_subs="packages channels bundles" ;;
        "kpkg image") __kpkg_subs="inspect" ;;
        "kpkg cache") __kpkg_subs="ls prune" ;;
        "kpkg package") __kpkg_subs="validate tree render update repo" ;;
        "kpkg package repo") __kpkg_subs="init add remove list" ;;
        *) __kpkg_subs= ;;
    esac
}

# The flags of a command path, into __kpkg_flags; the global flags are accepted after any command.
__kpkg_flags() {
    local global="-o --output -v --verbose -q --quiet --no-color --no-cache --platform --offline --insecure --request-timeout -h --help"
    case $1 in
        "kpkg") __kpkg_flags="$global --version" ;;
        "kpkg version") __kpkg_flags="$global --libraries" ;;
        "kpkg help") __kpkg_flags="$global --man" ;;
        "kpkg bundle validate") __kpkg_flags="$global --strict --k8s-version" ;;
        "kpkg catalog validate") __kpkg_flags="$global --strict --lenient --allow-empty" ;;
        "kpkg catalog diff") __kpkg_flags="$global --exit-code" ;;
        "kpkg catalog graph") __kpkg_flags="$global --channel --format" ;;
        "kpkg catalog render") __kpkg_flags="$global --output-file" ;;
        "kpkg bundle render") __kpkg_flags="$global --image --csv-metadata" ;;
        "kpkg upgrade-path") __kpkg_flags="$global --from --to --channel --source --shortest --catalog --priority" ;;
        "kpkg build") __kpkg_flags="$global -t --tag --save --push --label --base-image --lenient" ;;
        "kpkg pull") __kpkg_flags="$global --save --all-platforms" ;;
        "kpkg cache prune") __kpkg_flags="$global --older-than" ;;
        "kpkg package repo add") __kpkg_flags="$global --image" ;;
        "kpkg package validate") __kpkg_flags="$global --update-fixtures" ;;
        "kpkg package tree") __kpkg_flags="$global --config-testcase --component --cluster --config-path" ;;
        "kpkg package render") __kpkg_flags="$global --config-testcase --component --config --name --namespace --environment --as --image --output-dir" ;;
        "kpkg resolve") __kpkg_flags="$global --catalog --priority --installed --starting-csv --source --upgrade --one-hop --exclude-deprecated --all-packages --lockfile --locked --debug-testcase" ;;
        "kpkg plan") __kpkg_flags="$global --catalog --priority --installed --starting-csv --source --upgrade --exclude-deprecated -n --namespace --approval --catalog-namespace --bundle-dir --output-dir --format --target-namespaces --catalog-image --sync-waves --cert-provider --check --force" ;;
        "kpkg apply") __kpkg_flags="$global --kubeconfig --context -n --namespace --timeout --wait --no-wait --concurrency --dry-run --diff --force-conflicts --prune --applyset --config" ;;
        "kpkg install") __kpkg_flags="$global --catalog --priority --installed --starting-csv --source --upgrade --exclude-deprecated -n --namespace --approval --catalog-namespace --bundle-dir --mode --target-namespaces --catalog-image --cert-provider --kubeconfig --context --timeout --wait --no-wait --concurrency --dry-run --diff --force-conflicts --prune --applyset -y --yes" ;;
        "kpkg delete") __kpkg_flags="$global --kubeconfig --context -n --namespace --timeout --wait --no-wait --concurrency --applyset --dry-run --config" ;;
        *) __kpkg_flags=$global ;;
    esac
}

# Package names of the catalog $1, read with kpkg itself ($2: the kpkg being completed).
__kpkg_catalog_packages() {
    local src=$1 kpkg=$2
    [[ -z $src || $src == - ]] && return
    [[ $src == "~"* ]] && src=$HOME${src:1}
    [[ -e $src ]] || return
    "$kpkg" --no-color catalog list packages "$src" 2>/dev/null | while read -r name _; do
        [[ $name == NAME ]] || echo "$name"
    done
}

# Channel names of package $2 in the catalog $1 ($3: the kpkg being completed).
__kpkg_catalog_channels() {
    local src=$1 pkg=$2 kpkg=$3
    [[ -z $src || $src == - ]] && return
    [[ $src == "~"* ]] && src=$HOME${src:1}
    [[ -e $src ]] || return
    "$kpkg" --no-color catalog list channels "$src" "$pkg" 2>/dev/null | while read -r _ channel _; do
        [[ $channel == CHANNEL ]] || echo "$channel"
    done
}

_kpkg() {
    local cur=${COMP_WORDS[COMP_CWORD]} prev=${COMP_WORDS[COMP_CWORD - 1]}
    local path=kpkg i w __kpkg_subs __kpkg_flags
    local -a args=()
    COMPREPLY=()

    # Walk the words before the cursor: subcommands extend the path, the rest are arguments.
    for ((i = 1; i < COMP_CWORD; i++)); do
        w=${COMP_WORDS[i]}
        case $w in
            -o | --output | --image | --k8s-version | --channel | --format | --output-file | \
                --catalog | --priority | --installed | --starting-csv | --source | --debug-testcase | --from | --to | --lockfile | --locked | \
                -t | --tag | --save | --platform | --label | --base-image | --older-than | \
                -n | --namespace | --approval | --catalog-namespace | --bundle-dir | \
                --output-dir | --target-namespaces | --catalog-image | --cert-provider | \
                --kubeconfig | --context | --timeout | --concurrency | --dry-run | --applyset | --config | --mode | \
                --request-timeout)
                # Its value follows; "--output=json" may arrive split as "--output" "=" "json".
                if [[ ${COMP_WORDS[i + 1]} == = ]]; then ((i += 2)); else ((i++)); fi
                # A value with a colon (oci:DIR, quay.io/op:v1) arrives split at it as well.
                while [[ ${COMP_WORDS[i + 1]} == : ]] && ((i + 2 < COMP_CWORD)); do ((i += 2)); done
                continue
                ;;
            :)
                # The rest of the previous word, split at its colon (oci:DIR, quay.io/op:v1).
                ((i++))
                continue
                ;;
            -*) continue ;;
        esac
        __kpkg_subcommands "$path"
        if ((${#args[@]} == 0)) && [[ " $__kpkg_subs " == *" $w "* ]]; then
            path+=" $w"
        else
            args+=("$w")
        fi
    done

    # The value of -o/--output (also "--output=<TAB>", which bash splits at the "=").
    local before=
    ((COMP_CWORD >= 2)) && before=${COMP_WORDS[COMP_CWORD - 2]}
    if [[ $cur == = && ($prev == -o || $prev == --output) ]]; then
        COMPREPLY=(text json yaml junit github)
        return
    fi
    if [[ $prev == -o || $prev == --output ]] || [[ $prev == = && ($before == -o || $before == --output) ]]; then
        COMPREPLY=($(compgen -W "text json yaml junit github" -- "$cur"))
        return
    fi
    if [[ $cur == --output=* ]]; then
        COMPREPLY=($(compgen -W "text json yaml junit github" -- "${cur#--output=}"))
        return
    fi
    # The value of --platform (global, and build's and pull's own).
    if [[ $prev == --platform ]]; then
        COMPREPLY=($(compgen -W "linux/amd64 linux/arm64 linux/ppc64le linux/s390x" -- "$cur"))
        return
    fi
    # --request-timeout DURATION (global): nothing to offer.
    [[ $prev == --request-timeout ]] && return

    if [[ $cur == -* ]]; then
        __kpkg_flags "$path"
        COMPREPLY=($(compgen -W "$__kpkg_flags" -- "$cur"))
        return
    fi

    __kpkg_subcommands "$path"
    if [[ -n $__kpkg_subs ]]; then
        COMPREPLY=($(compgen -W "$__kpkg_subs" -- "$cur"))
        return
    fi

    # Image locations: the transports skopeo names, then a path after oci:, oci-archive: or
    # docker-archive: (bash splits "oci:DIR" into "oci" ":" "DIR").
    if [[ $prev == : && ($before == oci || $before == oci-archive || $before == docker-archive) ]]; then
        compopt -o filenames 2>/dev/null
        mapfile -t COMPREPLY < <(compgen -f -- "$cur")
        return
    fi
    if [[ $cur == : && ($prev == oci || $prev == oci-archive || $prev == docker-archive) ]]; then
        compopt -o filenames 2>/dev/null
        mapfile -t COMPREPLY < <(compgen -f)
        return
    fi
    if [[ $prev == --save ]]; then
        # DEST: oci:DIR[:TAG], oci-archive:FILE[:TAG], docker-archive:FILE.
        compopt -o nospace 2>/dev/null
        COMPREPLY=($(compgen -W "oci: oci-archive: docker-archive:" -- "$cur"))
        return
    fi
    if [[ $prev == --base-image ]]; then
        COMPREPLY=($(compgen -W "scratch oci: oci-archive: docker-archive: docker://" -- "$cur"))
        [[ ${#COMPREPLY[@]} -eq 1 && ${COMPREPLY[0]} == scratch ]] || compopt -o nospace 2>/dev/null
        return
    fi
    # -t/--tag REF, --label KEY=VALUE, --older-than DAYS: nothing to offer.
    [[ $prev == -t || $prev == --tag || $prev == --label || $prev == --older-than ]] && return
    # --image REF, --k8s-version VERSION: nothing to offer.
    [[ $prev == --image || $prev == --k8s-version ]] && return
    if [[ $prev == --output-file ]]; then
        compopt -o filenames 2>/dev/null
        mapfile -t COMPREPLY < <(compgen -f -- "$cur")
        return
    fi
    if [[ $prev == --installed || $prev == --lockfile || $prev == --locked ]]; then
        compopt -o filenames 2>/dev/null
        mapfile -t COMPREPLY < <(compgen -f -- "$cur")
        return
    fi
    if [[ $prev == --debug-testcase ]]; then
        compopt -o filenames 2>/dev/null
        mapfile -t COMPREPLY < <(compgen -d -- "$cur")
        return
    fi
    if [[ $prev == --catalog ]]; then
        # [NAME=]PATH: a catalog directory or file.
        compopt -o filenames 2>/dev/null
        mapfile -t COMPREPLY < <(compgen -f -- "${cur#*=}")
        return
    fi
    # --priority NAME=N, --starting-csv CSV, --source CATALOG, --from and --to VERSION|CSV: nothing
    # to offer.
    [[ $prev == --priority || $prev == --starting-csv || $prev == --source || $prev == --from || $prev == --to ]] && return
    if [[ $prev == --approval ]]; then
        COMPREPLY=($(compgen -W "Automatic Manual" -- "$cur"))
        return
    fi
    if [[ $prev == --bundle-dir ]]; then
        # NAME=DIR: a bundle directory after the "=".
        [[ $cur == *=* ]] || return
        compopt -o filenames 2>/dev/null
        mapfile -t COMPREPLY < <(compgen -d -- "${cur#*=}")
        return
    fi
    # -n/--namespace NS, --catalog-namespace NS, --target-namespaces NS,..., --catalog-image
    # [NAME=]REF: nothing to offer.
    [[ $prev == -n || $prev == --namespace || $prev == --catalog-namespace || $prev == --target-namespaces || $prev == --catalog-image ]] && return
    if [[ $prev == --output-dir ]]; then
        compopt -o filenames 2>/dev/null
        mapfile -t COMPREPLY < <(compgen -d -- "$cur")
        return
    fi
    if [[ $prev == --cert-provider ]]; then
        COMPREPLY=($(compgen -W "cert-manager openshift-service-ca" -- "$cur"))
        return
    fi
    if [[ $prev == --dry-run ]]; then
        COMPREPLY=($(compgen -W "client server" -- "$cur"))
        return
    fi
    # --context NAME, --timeout DURATION, --concurrency N, --applyset NAME: nothing to offer.
    [[ $prev == --context || $prev == --timeout || $prev == --concurrency || $prev == --applyset ]] && return
    if [[ $prev == --kubeconfig || $prev == --config ]]; then
        compopt -o filenames 2>/dev/null
        mapfile -t COMPREPLY < <(compgen -f -- "$cur")
        return
    fi
    if [[ $prev == --mode ]]; then
        COMPREPLY=($(compgen -W "manifests olm" -- "$cur"))
        return
    fi
    if [[ $prev == --format && $path == "kpkg plan" ]]; then
        COMPREPLY=($(compgen -W "olm manifests" -- "$cur"))
        return
    fi
    if [[ $prev == --format ]]; then
        COMPREPLY=($(compgen -W "text dot mermaid" -- "$cur"))
        return
    fi
    if [[ $prev == --channel ]]; then
        # The channels of the package being drawn.
        ((${#args[@]} >= 2)) && COMPREPLY=($(compgen -W "$(__kpkg_catalog_channels "${args[0]}" "${args[1]}" "${COMP_WORDS[0]}")" -- "$cur"))
        return
    fi

    case $path in
        "kpkg completion")
            ((${#args[@]} == 0)) && COMPREPLY=($(compgen -W "bash zsh fish" -- "$cur"))
            ;;
        "kpkg help")
            # COMMAND...: the subcommands of the command named so far.
            __kpkg_subcommands "kpkg${args[*]:+ ${args[*]}}"
            COMPREPLY=($(compgen -W "$__kpkg_subs" -- "$cur"))
            ;;
        "kpkg build")
            # DIR: a bundle directory or a catalog (directory, file, or - for standard input).
            if ((${#args[@]} == 0)); then
                compopt -o filenames 2>/dev/null
                mapfile -t COMPREPLY < <(compgen -f -- "$cur")
                [[ -z $cur ]] && COMPREPLY+=(-)
            fi
            ;;
        "kpkg pull" | "kpkg push" | "kpkg image inspect")
            # IMAGE, [SRC] REF: a reference (nothing to offer), an image transport, or a layout
            # directory or archive.
            if ((${#args[@]} == 0)); then
                compopt -o filenames 2>/dev/null
                mapfile -t COMPREPLY < <(compgen -W "oci: oci-archive: docker-archive: docker://" -- "$cur"; compgen -f -- "$cur")
                [[ " ${COMPREPLY[*]} " == *[:/]" "* ]] && compopt -o nospace 2>/dev/null
            fi
            ;;
        "kpkg bundle inspect" | "kpkg bundle render")
            # DIR: one bundle directory.
            if ((${#args[@]} == 0)); then
                compopt -o filenames 2>/dev/null
                mapfile -t COMPREPLY < <(compgen -d -- "$cur")
            fi
            ;;
        "kpkg bundle validate")
            # DIR...: bundle directories.
            compopt -o filenames 2>/dev/null
            mapfile -t COMPREPLY < <(compgen -d -- "$cur")
            ;;
        "kpkg catalog validate")
            # SRC: a catalog directory or file, or - for standard input.
            if ((${#args[@]} == 0)); then
                compopt -o filenames 2>/dev/null
                mapfile -t COMPREPLY < <(compgen -f -- "$cur")
                [[ -z $cur ]] && COMPREPLY+=(-)
            fi
            ;;
        "kpkg apply" | "kpkg delete")
            # SRC...: manifest files and directories, plan trees, Package Operator packages.
            compopt -o filenames 2>/dev/null
            mapfile -t COMPREPLY < <(compgen -f -- "$cur")
            ;;
        "kpkg catalog render")
            # SRC...: catalogs (directories, files, -) and bundle directories.
            compopt -o filenames 2>/dev/null
            mapfile -t COMPREPLY < <(compgen -f -- "$cur")
            [[ -z $cur ]] && COMPREPLY+=(-)
            ;;
        "kpkg catalog diff")
            # OLD and NEW: catalog directories or files, or - for standard input.
            if ((${#args[@]} < 2)); then
                compopt -o filenames 2>/dev/null
                mapfile -t COMPREPLY < <(compgen -f -- "$cur")
                [[ -z $cur ]] && COMPREPLY+=(-)
            fi
            ;;
        "kpkg catalog graph")
            if ((${#args[@]} == 0)); then
                compopt -o filenames 2>/dev/null
                mapfile -t COMPREPLY < <(compgen -f -- "$cur")
                [[ -z $cur ]] && COMPREPLY+=(-)
            elif ((${#args[@]} == 1)); then
                COMPREPLY=($(compgen -W "$(__kpkg_catalog_packages "${args[0]}" "${COMP_WORDS[0]}")" -- "$cur"))
            fi
            ;;
        "kpkg resolve" | "kpkg plan" | "kpkg install" | "kpkg upgrade-path")
            # REQUEST (PKG[:CHANNEL][@RANGE][/CATALOG]) or PACKAGE: a package of the first --catalog.
            local c= j
            for ((j = 1; j < COMP_CWORD; j++)); do
                if [[ ${COMP_WORDS[j]} == --catalog ]]; then
                    c=${COMP_WORDS[j + 1]}
                    break
                fi
            done
            [[ -n $c ]] && COMPREPLY=($(compgen -W "$(__kpkg_catalog_packages "${c#*=}" "${COMP_WORDS[0]}")" -- "$cur"))
            ;;
        "kpkg catalog list packages" | "kpkg catalog list channels" | "kpkg catalog list bundles")
            if ((${#args[@]} == 0)); then
                # SRC: a catalog directory or file, or - for standard input.
                compopt -o filenames 2>/dev/null
                mapfile -t COMPREPLY < <(compgen -f -- "$cur")
                [[ -z $cur ]] && COMPREPLY+=(-)
            elif ((${#args[@]} == 1)) && [[ $path != "kpkg catalog list packages" ]]; then
                # PACKAGE: a package of that catalog.
                COMPREPLY=($(compgen -W "$(__kpkg_catalog_packages "${args[0]}" "${COMP_WORDS[0]}")" -- "$cur"))
            fi
            ;;
    esac
}

complete -F _kpkg kpkg
