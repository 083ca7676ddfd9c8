# Shared by the load benchmarks (sourced, from the repository's root).

# The `portcullis` binary to measure: PORTCULLIS_BIN (another build, an older
# commit's to compare), else a release build made here. The build lands in
# target/<triple>/release (.cargo/config.toml names the target).
portcullis_bin() {
  if [ -n "${PORTCULLIS_BIN:-}" ]; then
    echo "$PORTCULLIS_BIN"
    return
  fi
  cargo build --release --locked -p portcullis >/dev/null
  local b
  for b in "$PWD"/target/*-linux-*/release/portcullis "$PWD"/target/release/portcullis; do
    [ -x "$b" ] && break
  done
  echo "$b"
}

# A free loopback port.
free_port() {
  python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'
}
