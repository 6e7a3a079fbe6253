#!/bin/sh
# The entry of the Node app images: the app the image was built for (STOA_APP), reading its mounted config unless
# other arguments are given.
app=${STOA_APP:?STOA_APP names the app to run}
[ $# -gt 0 ] || set -- --config "/etc/stoa/$app.yaml"
exec node "/app/dist/apps/$app/main.js" "$@"
