# fish completion for kpkg. Installed in share/fish/vendor_completions.d.
# tests/cli/test_docs.cpp checks it against `kpkg __spec`.

# True when the command line holds no subcommand yet.
function __kpkg_no_subcommand
    not __fish_seen_subcommand_from bundle catalog package resolve plan upgrade-path apply delete install build push pull image cache version completion help
end

# True when the command path so far is exactly the words given (e.g. catalog list).
function __kpkg_path_is
    set -l words (commandline -opc)
    set -e words[1]
    set -l path
    set -l skip 0
    for w in $words
        if test $skip -eq 1
            set skip 0
            continue
        end
        switch $w
            case -o --output -t --tag --save --platform --label --base-image --older-than
                set skip 1
            case '-*'
            case '*'
                set -a path $w
        end
    end
    test "$path" = "$argv"
end

# The positional arguments after `kpkg catalog list <what>`, without flags.
function __kpkg_list_args
    set -l words (commandline -opc)
    set -l args
    set -l skip 0
    for w in $words[2..-1]
        if test $skip -eq 1
            set skip 0
            continue
        end
        switch $w
            case -o --output -t --tag --save --platform --label --base-image --older-than
                set skip 1
            case '-*'
            case '*'
                set -a args $w
        end
    end
    # args: catalog list <what> SRC ...
    for a in $args[4..-1]
        echo $a
    end
end

# Package names of the catalog given as SRC, read with kpkg itself.
function __kpkg_catalog_packages
    set -l src (__kpkg_list_args)[1]
    set src (string replace -r '^~(?=/|$)' -- $HOME "$src")
    test -n "$src"; and test "$src" != -; and test -e "$src"; or return
    set -l kpkg (commandline -opc)[1]
    command -q $kpkg; or return
    $kpkg --no-color catalog list packages $src 2>/dev/null | tail -n +2 | string replace -r ' .*' ''
end

complete -c kpkg -f

# Global flags, accepted after any command.
complete -c kpkg -s o -l output -x -a 'text json yaml junit github' -d 'Output format'
complete -c kpkg -s v -l verbose -d 'More detail on stderr (repeatable)'
complete -c kpkg -s q -l quiet -d 'Only errors on stderr'
complete -c kpkg -l no-color -d 'No colour (also when NO_COLOR is set)'
complete -c kpkg -l no-cache -d 'Do not read or write the catalog cache'
complete -c kpkg -l platform -x -a 'linux/amd64 linux/arm64 linux/ppc64le linux/s390x' -d 'Platform of image inputs (build: to build for)'
complete -c kpkg -l offline -d 'Images from the cache only, no network'
complete -c kpkg -l insecure -d 'Plain http to the registries named'
complete -c kpkg -l request-timeout -x -d 'Registry and API requests: deadline of small documents, window of the blob rate (30s)'
complete -c kpkg -s h -l help -d 'Show help and exit'
complete -c kpkg -n __kpkg_no_subcommand -l version -d 'Print the version and exit'

# kpkg bundle
complete -c kpkg -n __kpkg_no_subcommand -a bundle -d 'Inspect, validate and render OLM registry+v1 bundles'
complete -c kpkg -n '__kpkg_path_is bundle' -a inspect -d 'Show what a bundle is, provides, needs and runs'
complete -c kpkg -n '__kpkg_path_is bundle' -a validate -d 'Check bundle directories and report every problem'
complete -c kpkg -n '__kpkg_path_is bundle' -a render -d 'Write the olm.bundle blob of a bundle, as opm render does'
complete -c kpkg -n '__fish_seen_subcommand_from inspect validate render; and __fish_seen_subcommand_from bundle' -x -a '(__fish_complete_directories)'
complete -c kpkg -n '__fish_seen_subcommand_from validate; and __fish_seen_subcommand_from bundle' -l strict -d 'Treat warnings as errors'
complete -c kpkg -n '__fish_seen_subcommand_from validate; and __fish_seen_subcommand_from bundle' -l k8s-version -x -d 'Kubernetes release the bundles are for'
complete -c kpkg -n '__fish_seen_subcommand_from render; and __fish_seen_subcommand_from bundle' -l image -x -d 'The bundle image reference'
complete -c kpkg -n '__fish_seen_subcommand_from render; and __fish_seen_subcommand_from bundle' -l csv-metadata -d 'One olm.csv.metadata property instead of olm.bundle.object properties'

# kpkg catalog
complete -c kpkg -n __kpkg_no_subcommand -a catalog -d 'Work with File-Based Catalogs'
complete -c kpkg -n '__kpkg_path_is catalog' -a list -d 'List the packages, channels or bundles of a catalog'
complete -c kpkg -n '__kpkg_path_is catalog' -a validate -d 'Check a catalog as opm validate does, reporting every problem'
complete -c kpkg -n '__kpkg_path_is catalog' -a render -d 'Render catalogs and bundle directories as one catalog'
complete -c kpkg -n '__fish_seen_subcommand_from validate; and __fish_seen_subcommand_from catalog' -F -a - -d 'Catalog (directory, file, or - for stdin)'
complete -c kpkg -n '__fish_seen_subcommand_from validate; and __fish_seen_subcommand_from catalog' -l strict -d 'Treat warnings as errors'
complete -c kpkg -n '__fish_seen_subcommand_from validate; and __fish_seen_subcommand_from catalog' -l lenient -d 'Report what older opm accepts as warnings'
complete -c kpkg -n '__fish_seen_subcommand_from validate; and __fish_seen_subcommand_from catalog' -l allow-empty -d 'Accept a catalog without packages'
complete -c kpkg -n '__fish_seen_subcommand_from render; and __fish_seen_subcommand_from catalog' -F -a - -d 'Catalog or bundle directory (or - for stdin)'
complete -c kpkg -n '__fish_seen_subcommand_from render; and __fish_seen_subcommand_from catalog' -l output-file -r -F -d 'Write the catalog to FILE, atomically'
complete -c kpkg -n '__kpkg_path_is catalog' -a diff -d 'Show what changes from one catalog to another'
complete -c kpkg -n '__kpkg_path_is catalog' -a graph -d 'Show the upgrade graph of a package'
complete -c kpkg -n '__fish_seen_subcommand_from diff; and __fish_seen_subcommand_from catalog' -F -a - -d 'Catalog (directory, file, or - for stdin)'
complete -c kpkg -n '__fish_seen_subcommand_from diff; and __fish_seen_subcommand_from catalog' -l exit-code -d 'Exit with status 5 when the catalogs differ'
complete -c kpkg -n '__fish_seen_subcommand_from graph; and __fish_seen_subcommand_from catalog' -F -d 'Catalog (directory, file, or - for stdin)'
complete -c kpkg -n '__fish_seen_subcommand_from graph; and __fish_seen_subcommand_from catalog' -l channel -x -d 'Only this channel'
complete -c kpkg -n '__fish_seen_subcommand_from graph; and __fish_seen_subcommand_from catalog' -l format -x -a 'text dot mermaid' -d 'Graph format'
complete -c kpkg -n '__kpkg_path_is catalog list' -a packages -d 'List the packages of a catalog'
complete -c kpkg -n '__kpkg_path_is catalog list' -a channels -d 'List the channels of a catalog'
complete -c kpkg -n '__kpkg_path_is catalog list' -a bundles -d 'List the bundles of a catalog'
# SRC: a catalog directory or file, or - for stdin; then PACKAGE for channels and bundles.
complete -c kpkg -n '__fish_seen_subcommand_from packages channels bundles; and test (count (__kpkg_list_args)) -eq 0' -F -a - -d 'Catalog (directory, file, or - for stdin)'
complete -c kpkg -n '__fish_seen_subcommand_from channels bundles; and test (count (__kpkg_list_args)) -eq 1' -x -a '(__kpkg_catalog_packages)' -d Package

# kpkg resolve
complete -c kpkg -n __kpkg_no_subcommand -a resolve -d 'Resolve operator subscriptions and their dependencies, as OLM would'
complete -c kpkg -n '__fish_seen_subcommand_from resolve' -l catalog -r -F -d 'A catalog: [NAME=]PATH (repeatable)'
complete -c kpkg -n '__fish_seen_subcommand_from resolve' -l priority -x -d 'Priority of catalog NAME: NAME=N'
complete -c kpkg -n '__fish_seen_subcommand_from resolve' -l installed -r -F -d 'YAML file of the installed CSVs'
complete -c kpkg -n '__fish_seen_subcommand_from resolve' -l starting-csv -x -d 'Start the request of this bundle\'s package at this bundle'
complete -c kpkg -n '__fish_seen_subcommand_from resolve' -l source -x -d 'The catalog of every request that names none'
complete -c kpkg -n '__fish_seen_subcommand_from resolve' -l upgrade -d 'Subscribe every installed CSV and move it forward'
complete -c kpkg -n '__fish_seen_subcommand_from resolve' -l one-hop -d 'Upgrade by one step only, as one OLM InstallPlan does'
complete -c kpkg -n '__fish_seen_subcommand_from resolve' -l exclude-deprecated -d 'Leave out candidates deprecated by olm.deprecations'
complete -c kpkg -n '__fish_seen_subcommand_from resolve' -l all-packages -d 'Resolve every package of the catalogs on its own'
complete -c kpkg -n '__fish_seen_subcommand_from resolve' -l lockfile -r -F -d 'Write the resolution with the catalogs\' digests to FILE'
complete -c kpkg -n '__fish_seen_subcommand_from resolve' -l locked -r -F -d 'Reproduce the lock in FILE exactly, or say what drifted'
complete -c kpkg -n '__fish_seen_subcommand_from resolve' -l debug-testcase -x -a '(__fish_complete_directories)' -d 'Write the libsolv testcase of the final solve into DIR'

# kpkg plan
complete -c kpkg -n __kpkg_no_subcommand -a plan -d 'Render the InstallPlan OLM would create for operator subscriptions'
complete -c kpkg -n '__fish_seen_subcommand_from plan' -l catalog -r -F -d 'A catalog: [NAME=]PATH (repeatable)'
complete -c kpkg -n '__fish_seen_subcommand_from plan' -l priority -x -d 'Priority of catalog NAME: NAME=N'
complete -c kpkg -n '__fish_seen_subcommand_from plan' -l installed -r -F -d 'YAML file of the installed CSVs'
complete -c kpkg -n '__fish_seen_subcommand_from plan' -l starting-csv -x -d 'Start the request of this bundle\'s package at this bundle'
complete -c kpkg -n '__fish_seen_subcommand_from plan' -l source -x -d 'The catalog of every request that names none'
complete -c kpkg -n '__fish_seen_subcommand_from plan' -l upgrade -d 'Subscribe every installed CSV and move it forward'
complete -c kpkg -n '__fish_seen_subcommand_from plan' -l exclude-deprecated -d 'Leave out candidates deprecated by olm.deprecations'
complete -c kpkg -n '__fish_seen_subcommand_from plan' -s n -l namespace -x -d 'The namespace of the Subscriptions and of the InstallPlan'
complete -c kpkg -n '__fish_seen_subcommand_from plan' -l approval -x -a 'Automatic Manual' -d 'The Subscriptions\' installPlanApproval'
complete -c kpkg -n '__fish_seen_subcommand_from plan' -l catalog-namespace -x -d 'The namespace of the CatalogSources'
complete -c kpkg -n '__fish_seen_subcommand_from plan' -l bundle-dir -r -d 'Read bundle NAME\'s manifests from DIR: NAME=DIR (repeatable)'
complete -c kpkg -n '__fish_seen_subcommand_from plan' -l output-dir -r -a '(__fish_complete_directories)' -d 'Write a GitOps tree of the plan to DIR'
complete -c kpkg -n '__fish_seen_subcommand_from plan' -l format -x -a 'olm manifests' -d 'The tree: olm (with OLM) or manifests (without)'
complete -c kpkg -n '__fish_seen_subcommand_from plan' -l target-namespaces -x -d 'The namespaces the operators watch, comma-separated'
complete -c kpkg -n '__fish_seen_subcommand_from plan' -l catalog-image -x -d 'The image of a catalog\'s CatalogSource: [NAME=]REF'
complete -c kpkg -n '__fish_seen_subcommand_from plan' -l sync-waves -d 'Annotate the objects with Argo CD sync waves'
complete -c kpkg -n '__fish_seen_subcommand_from plan' -l cert-provider -x -a 'cert-manager openshift-service-ca' -d 'Who provides webhook certificates without OLM'
complete -c kpkg -n '__fish_seen_subcommand_from plan' -l check -d 'Only compare the tree in DIR: exit 5 when it differs'
complete -c kpkg -n '__fish_seen_subcommand_from plan' -l force -d 'Write into DIR even when it holds files kpkg plan did not write'

# kpkg apply, kpkg delete
complete -c kpkg -n __kpkg_no_subcommand -a apply -d 'Apply manifests, plan trees or Package Operator packages to a cluster in phases'
complete -c kpkg -n __kpkg_no_subcommand -a delete -d 'Delete what kpkg apply applied, in reverse phase order'
complete -c kpkg -n '__fish_seen_subcommand_from apply delete' -l kubeconfig -r -F -d 'The kubeconfig file'
complete -c kpkg -n '__fish_seen_subcommand_from apply delete' -l context -x -d 'The kubeconfig context'
complete -c kpkg -n '__fish_seen_subcommand_from apply delete' -s n -l namespace -x -d 'The namespace of objects that name none'
complete -c kpkg -n '__fish_seen_subcommand_from apply delete' -l timeout -x -d 'A time limit for the whole run (90s, 5m)'
complete -c kpkg -n '__fish_seen_subcommand_from apply delete' -l wait -d 'Wait for each phase before the next'
complete -c kpkg -n '__fish_seen_subcommand_from apply delete' -l no-wait -d 'Only wait for the CRDs custom resources need'
complete -c kpkg -n '__fish_seen_subcommand_from apply delete' -l concurrency -x -d 'Requests in flight at once'
complete -c kpkg -n '__fish_seen_subcommand_from apply delete' -l dry-run -x -a 'client server' -d 'Check without changing anything'
complete -c kpkg -n '__fish_seen_subcommand_from apply delete' -l config -r -F -d 'A Package Operator package configuration'
complete -c kpkg -n '__fish_seen_subcommand_from apply delete' -l applyset -x -d 'The ApplySet parent: [RESOURCE[.GROUP]/]NAME'
complete -c kpkg -n '__fish_seen_subcommand_from apply' -l diff -d 'Show what would change; exit 5 when something would'
complete -c kpkg -n '__fish_seen_subcommand_from apply' -l force-conflicts -d 'Take over fields another field manager owns'
complete -c kpkg -n '__fish_seen_subcommand_from apply' -l prune -d 'Delete the set members no longer in the input'

# kpkg install
complete -c kpkg -n __kpkg_no_subcommand -a install -d 'Resolve operators from catalogs, plan them and apply them to a cluster'
complete -c kpkg -n '__fish_seen_subcommand_from install' -l catalog -r -F -d 'A catalog: [NAME=]PATH (repeatable)'
complete -c kpkg -n '__fish_seen_subcommand_from install' -l priority -x -d 'Priority of catalog NAME: NAME=N'
complete -c kpkg -n '__fish_seen_subcommand_from install' -l installed -r -F -d 'YAML file of the installed CSVs'
complete -c kpkg -n '__fish_seen_subcommand_from install' -l starting-csv -x -d 'Start the request of this bundle\'s package at this bundle'
complete -c kpkg -n '__fish_seen_subcommand_from install' -l source -x -d 'The catalog of every request that names none'
complete -c kpkg -n '__fish_seen_subcommand_from install' -l upgrade -d 'Subscribe every installed CSV and move it forward'
complete -c kpkg -n '__fish_seen_subcommand_from install' -l exclude-deprecated -d 'Leave out candidates deprecated by olm.deprecations'
complete -c kpkg -n '__fish_seen_subcommand_from install' -s n -l namespace -x -d 'The namespace the operators are installed in'
complete -c kpkg -n '__fish_seen_subcommand_from install' -l approval -x -a 'Automatic Manual' -d 'The Subscriptions\' installPlanApproval'
complete -c kpkg -n '__fish_seen_subcommand_from install' -l catalog-namespace -x -d 'The namespace of the CatalogSources'
complete -c kpkg -n '__fish_seen_subcommand_from install' -l bundle-dir -r -d 'Read bundle NAME\'s manifests from DIR: NAME=DIR (repeatable)'
complete -c kpkg -n '__fish_seen_subcommand_from install' -l mode -x -a 'manifests olm' -d 'What is applied: manifests (without OLM) or olm (for OLM to install)'
complete -c kpkg -n '__fish_seen_subcommand_from install' -l target-namespaces -x -d 'The namespaces the operators watch, comma-separated'
complete -c kpkg -n '__fish_seen_subcommand_from install' -l catalog-image -x -d 'The image of a catalog\'s CatalogSource: [NAME=]REF'
complete -c kpkg -n '__fish_seen_subcommand_from install' -l cert-provider -x -a 'cert-manager openshift-service-ca' -d 'Who provides webhook certificates without OLM'
complete -c kpkg -n '__fish_seen_subcommand_from install' -l kubeconfig -r -F -d 'The kubeconfig file'
complete -c kpkg -n '__fish_seen_subcommand_from install' -l context -x -d 'The kubeconfig context'
complete -c kpkg -n '__fish_seen_subcommand_from install' -l timeout -x -d 'A time limit for the whole run (90s, 5m)'
complete -c kpkg -n '__fish_seen_subcommand_from install' -l wait -d 'Wait for each phase before the next'
complete -c kpkg -n '__fish_seen_subcommand_from install' -l no-wait -d 'Only wait for the CRDs custom resources need'
complete -c kpkg -n '__fish_seen_subcommand_from install' -l concurrency -x -d 'Requests in flight at once'
complete -c kpkg -n '__fish_seen_subcommand_from install' -l dry-run -x -a 'client server' -d 'Check without changing anything'
complete -c kpkg -n '__fish_seen_subcommand_from install' -l diff -d 'Show what would change; exit 5 when something would'
complete -c kpkg -n '__fish_seen_subcommand_from install' -l force-conflicts -d 'Take over fields another field manager owns'
complete -c kpkg -n '__fish_seen_subcommand_from install' -l prune -d 'Delete the set members that are no longer installed'
complete -c kpkg -n '__fish_seen_subcommand_from install' -l applyset -x -d 'Record what is installed as an ApplySet: [RESOURCE[.GROUP]/]NAME'
complete -c kpkg -n '__fish_seen_subcommand_from install' -s y -l yes -d 'Do not ask before applying'

# kpkg upgrade-path
complete -c kpkg -n __kpkg_no_subcommand -a upgrade-path -d 'Show the upgrades OLM steps through from an installed version'
complete -c kpkg -n '__fish_seen_subcommand_from upgrade-path' -l from -x -d 'The installed bundle (CSV name) or version'
complete -c kpkg -n '__fish_seen_subcommand_from upgrade-path' -l to -x -d 'Stop at this bundle or version'
complete -c kpkg -n '__fish_seen_subcommand_from upgrade-path' -l channel -x -d 'Only this channel'
complete -c kpkg -n '__fish_seen_subcommand_from upgrade-path' -l source -x -d 'Only this catalog'
complete -c kpkg -n '__fish_seen_subcommand_from upgrade-path' -l shortest -d 'The fewest hops through the same upgrade edges'
complete -c kpkg -n '__fish_seen_subcommand_from upgrade-path' -l catalog -r -F -d 'A catalog: [NAME=]PATH (repeatable)'
complete -c kpkg -n '__fish_seen_subcommand_from upgrade-path' -l priority -x -d 'Priority of catalog NAME: NAME=N'

# Image locations: a transport (then a path), a layout directory or archive, or a reference.
function __kpkg_images
    set -l cur (commandline -ct)
    set -l m (string match -r '^(oci|oci-archive|docker-archive):(.*)$' -- $cur)
    if test (count $m) -eq 3
        for f in (__fish_complete_path $m[3])
            echo $m[2]:$f
        end
        return
    end
    printf '%s\n' oci: oci-archive: docker-archive: docker://
    __fish_complete_path $cur
end

# --save destinations: oci:DIR[:TAG], oci-archive:FILE[:TAG], docker-archive:FILE.
function __kpkg_image_dests
    set -l cur (commandline -ct)
    set -l m (string match -r '^(oci|oci-archive|docker-archive):(.*)$' -- $cur)
    if test (count $m) -eq 3
        for f in (__fish_complete_path $m[3])
            echo $m[2]:$f
        end
        return
    end
    printf '%s\n' oci: oci-archive: docker-archive:
end

# kpkg build
complete -c kpkg -n __kpkg_no_subcommand -a build -d 'Build a bundle or catalog image from a directory'
complete -c kpkg -n '__kpkg_path_is build' -F -a - -d 'Bundle directory or catalog (directory, file, or - for stdin)'
complete -c kpkg -n '__fish_seen_subcommand_from build' -s t -l tag -x -d 'A reference the image is known by (repeatable)'
complete -c kpkg -n '__fish_seen_subcommand_from build' -l save -x -a '(__kpkg_image_dests)' -d 'Also write the image to DEST (repeatable)'
complete -c kpkg -n '__fish_seen_subcommand_from build' -l push -d 'Push the image to the registry of every -t reference'
complete -c kpkg -n '__fish_seen_subcommand_from build' -l label -x -d 'Add a label to the image config: KEY=VALUE'
complete -c kpkg -n '__fish_seen_subcommand_from build' -l base-image -x -a 'scratch (__kpkg_images)' -d 'Catalogs: the image to layer the catalog on'
complete -c kpkg -n '__fish_seen_subcommand_from build' -l lenient -d 'Catalogs: accept what older opm releases accept'

# kpkg push
complete -c kpkg -n __kpkg_no_subcommand -a push -d 'Push an image to a registry'
complete -c kpkg -n '__kpkg_path_is push' -x -a '(__kpkg_images)' -d 'Image (SRC), or REF'

# kpkg pull
complete -c kpkg -n __kpkg_no_subcommand -a pull -d 'Pull an image into the cache (and save it)'
complete -c kpkg -n '__kpkg_path_is pull' -x -a '(__kpkg_images)' -d Image
complete -c kpkg -n '__fish_seen_subcommand_from pull' -l save -x -a '(__kpkg_image_dests)' -d 'Also write the image to DEST (repeatable)'
complete -c kpkg -n '__fish_seen_subcommand_from pull' -l all-platforms -d 'Every platform of an image index'

# kpkg image
complete -c kpkg -n __kpkg_no_subcommand -a image -d 'Look at images'
complete -c kpkg -n '__kpkg_path_is image' -a inspect -d 'Platforms, digests, sizes, labels and kind of package of an image'
complete -c kpkg -n '__kpkg_path_is image inspect' -x -a '(__kpkg_images)' -d Image

# kpkg cache
complete -c kpkg -n __kpkg_no_subcommand -a cache -d 'The image blob cache'
complete -c kpkg -n '__kpkg_path_is cache' -a ls -d 'What the cache holds: blobs, sizes, tags'
complete -c kpkg -n '__kpkg_path_is cache' -a prune -d 'Empty the cache, or remove what is old'
complete -c kpkg -n '__fish_seen_subcommand_from prune; and __fish_seen_subcommand_from cache' -l older-than -x -d 'Only what was last used more than DAYS days ago'

# kpkg package
complete -c kpkg -n __kpkg_no_subcommand -a package -d 'Package Operator packages: validate, tree, render, update, repositories'
complete -c kpkg -n '__kpkg_path_is package' -a validate -d 'Check a package and render every test case against its fixtures'
complete -c kpkg -n '__kpkg_path_is package' -a tree -d 'Show the phases and objects of a package'
complete -c kpkg -n '__kpkg_path_is package' -a render -d 'Print the objects or ObjectDeployment Package Operator would create'
complete -c kpkg -n '__kpkg_path_is package' -a update -d 'Write manifest.lock.yaml'
complete -c kpkg -n '__kpkg_path_is package' -a repo -d 'Package Operator repository index files'
complete -c kpkg -n '__fish_seen_subcommand_from validate; and __fish_seen_subcommand_from package' -l update-fixtures -d 'Write the fixtures of every test case'
complete -c kpkg -n '__fish_seen_subcommand_from tree render; and __fish_seen_subcommand_from package' -l config-testcase -x -d 'Take metadata and configuration from this test case'
complete -c kpkg -n '__fish_seen_subcommand_from tree render; and __fish_seen_subcommand_from package' -l component -x -d 'The component of a multi-component package'
complete -c kpkg -n '__fish_seen_subcommand_from tree; and __fish_seen_subcommand_from package' -l cluster -d 'Render the package in cluster scope'
complete -c kpkg -n '__fish_seen_subcommand_from tree; and __fish_seen_subcommand_from package' -l config-path -r -F -d 'Configuration file'
complete -c kpkg -n '__fish_seen_subcommand_from render; and __fish_seen_subcommand_from package' -l config -r -F -d 'Configuration file'
complete -c kpkg -n '__fish_seen_subcommand_from render; and __fish_seen_subcommand_from package' -l name -x -d 'Name of the Package'
complete -c kpkg -n '__fish_seen_subcommand_from render; and __fish_seen_subcommand_from package' -l namespace -x -d 'Namespace of the Package'
complete -c kpkg -n '__fish_seen_subcommand_from render; and __fish_seen_subcommand_from package' -l environment -r -F -d 'Environment file'
complete -c kpkg -n '__fish_seen_subcommand_from render; and __fish_seen_subcommand_from package' -l as -x -a 'objects objectdeployment' -d 'What to print'
complete -c kpkg -n '__fish_seen_subcommand_from render; and __fish_seen_subcommand_from package' -l image -x -d 'The package image'
complete -c kpkg -n '__fish_seen_subcommand_from render; and __fish_seen_subcommand_from package' -l output-dir -r -a '(__fish_complete_directories)' -d 'Write one file per object into this new directory'
complete -c kpkg -n '__kpkg_path_is package repo' -a init -d 'Write a new, empty repository index'
complete -c kpkg -n '__kpkg_path_is package repo' -a add -d 'Add a package image with its versions to an index'
complete -c kpkg -n '__kpkg_path_is package repo' -a remove -d 'Remove a package image from an index'
complete -c kpkg -n '__kpkg_path_is package repo' -a list -d 'List the packages and versions of an index'
complete -c kpkg -n '__fish_seen_subcommand_from add; and __fish_seen_subcommand_from repo' -l image -x -d "The repository written as the entry's image"

# kpkg version
complete -c kpkg -n __kpkg_no_subcommand -a version -d 'Print the version of kpkg and its libraries'
complete -c kpkg -n '__fish_seen_subcommand_from version' -l libraries -d 'Load the on-demand libraries and report their versions'

# kpkg completion
complete -c kpkg -n __kpkg_no_subcommand -a completion -d 'Print the shell completion script for bash, zsh or fish'
complete -c kpkg -n '__fish_seen_subcommand_from completion' -x -a 'bash zsh fish'

# kpkg help
complete -c kpkg -n __kpkg_no_subcommand -a help -d 'Show the help or the man page of a command'
complete -c kpkg -n '__fish_seen_subcommand_from help' -l man -d 'Show the man page of the command'
complete -c kpkg -n '__fish_seen_subcommand_from help; and not __fish_seen_subcommand_from bundle catalog package resolve plan upgrade-path apply delete install build push pull image cache version completion' -x -a 'bundle catalog package resolve upgrade-path apply delete install build push pull image cache version completion'
complete -c kpkg -n '__fish_seen_subcommand_from help; and __fish_seen_subcommand_from bundle' -x -a 'inspect validate render'
complete -c kpkg -n '__fish_seen_subcommand_from help; and __fish_seen_subcommand_from catalog' -x -a 'list validate render diff graph'
complete -c kpkg -n '__fish_seen_subcommand_from help; and __fish_seen_subcommand_from image' -x -a 'inspect'
complete -c kpkg -n '__fish_seen_subcommand_from help; and __fish_seen_subcommand_from cache' -x -a 'ls prune'
complete -c kpkg -n '__fish_seen_subcommand_from help; and __fish_seen_subcommand_from package' -x -a 'repo'
