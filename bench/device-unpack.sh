# device-unpack.sh -- sourced ON THE DEVICE by the bench/device-*.sh scripts, in the repository
# root: the build that bench/prepare-device.sh packed here comes as tarballs (the device tool takes
# at most 64 MiB a call; build-cuda itself is over 1 GB). Each of .devdata/bin.tar.xz (tools/ildl,
# ildl-gen), .devdata/baselines.tar.xz (bench/baseline's programs, ildl-cudss where built),
# .devdata/tests.tar.xz (the test programs the device scripts run) and .devdata/cudss.tar.xz
# (cuDSS, bench/get-cudss.sh) that was carried is unpacked, over whatever an earlier call on a
# warm machine left there. Carry only what the run needs (with the tracked tree, under 64 MiB):
#   bench/device-check.sh      .devdata/bin.tar.xz .devdata/tests.tar.xz .devdata/matrices .carry
#   bench/device-cudss.sh      .devdata/bin.tar.xz .devdata/baselines.tar.xz .devdata/cudss.tar.xz
#                              .devdata/matrices .devdata/mps .carry
#   device-bench/-large/-ab    .devdata/bin.tar.xz .devdata/baselines.tar.xz .devdata/matrices .carry
#   device-factor-timeline.sh  .devdata/bin.tar.xz .devdata/matrices .carry
#   device-factor-schedule.sh  .devdata/bin.tar.xz .devdata/matrices .carry
for ildl_pack_ in .devdata/bin.tar.xz .devdata/baselines.tar.xz .devdata/tests.tar.xz .devdata/cudss.tar.xz; do
  if [ -f "$ildl_pack_" ]; then
    tar -xJf "$ildl_pack_" -C . || echo "device-unpack.sh: $ildl_pack_ could not be unpacked" >&2
  fi
done
unset ildl_pack_
