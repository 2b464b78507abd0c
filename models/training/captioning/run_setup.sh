# Sourced by run_contrast.sh and run_boxes.sh before they start finetune.py (needs SHARED, DATA, INIT and REPO):
# unpacks the 160px Flickr8k photos into DATA on the first start, copies the warm start into INIT (a copy, so that
# the trunk cache's key -- the path -- stays the same): the two bundles as git revision WARM_REV holds them, by
# default 6764914, the bundle of 2026-11-29 (run P352b) that both recipes continue; and sets glibc's allocator so that
# freed memory stays in the heap: otherwise every large tensor is a fresh mmap whose pages the kernel zeroes
# (measured: half the CPU time in the kernel, MobileNetV2's trunk at 352² 10x slower).
if [ ! -f "$DATA/.complete" ]; then
    mkdir -p "$DATA"
    tar xf "$SHARED/data/flickr8k/flickr8k_images_160.tar" -C "$DATA"
    for f in Flickr8k.token.txt Flickr_8k.trainImages.txt Flickr_8k.devImages.txt Flickr_8k.testImages.txt; do
        ln -sf "$SHARED/data/flickr8k/$f" "$DATA/$f"
    done
    touch "$DATA/.complete"
fi
if [ ! -f "$INIT/.complete" ]; then
    mkdir -p "$INIT"
    git -C "$REPO" archive "${WARM_REV:-6764914}" models/flickr8k-mobilenet models/flickr8k-mobilenet-encoder \
        | tar x -C "$INIT" --strip-components=1
    touch "$INIT/.complete"
fi
export MALLOC_MMAP_MAX_=0 MALLOC_TRIM_THRESHOLD_=17179869184 MALLOC_TOP_PAD_=536870912
