#!/usr/bin/env python3
"""Builds photos/ of the everyday-photo set from Debian 12 packages unpacked with dpkg-deb.

  mkdir -p /tmp/debs && cd /tmp/debs && apt-get download kphotoalbum gnome-control-center-data python3-skimage \
      python-matplotlib-data lomiri-wallpapers-16.04 lomiri-wallpapers-20.04 plasma-workspace-wallpapers mate-backgrounds
  for f in *.deb; do n=${f%%_*}; mkdir -p x/$n; dpkg-deb -x $f x/$n; done
  /usr/bin/python3 models/training/captioning/everyday/prepare.py /tmp/debs/x

Each photo: EXIF orientation applied (and, for the KPhotoAlbum demo album, the rotation its index.xml records),
converted to RGB, resized to at most 512 px on its longer side (Lanczos), saved as JPEG quality 85 without metadata.
SOURCES lists package, path inside it and the rotation; LICENSE.md gives each photo's author and licence.
"""
import os
import sys

from PIL import Image, ImageOps

KPA = 'kphotoalbum/usr/share/kphotoalbum/demo/'
FACES = 'gnome-control-center-data/usr/share/pixmaps/faces/'
SKI = 'python3-skimage/usr/lib/python3/dist-packages/skimage/data/'
MPL = 'python-matplotlib-data/usr/share/matplotlib/mpl-data/sample_data/'
LOM16 = 'lomiri-wallpapers-16.04/usr/share/backgrounds/'
LOM20 = 'lomiri-wallpapers-20.04/usr/share/backgrounds/'
KDE = 'plasma-workspace-wallpapers/usr/share/wallpapers/'
MATE = 'mate-backgrounds/usr/share/backgrounds/mate/nature/'

# (file in photos/, path under the unpack folder, clockwise rotation in degrees)
SOURCES = [(f'kpa-{n}.jpg', f'{KPA}{n}.jpg', a) for n, a in [
    ('anne_helene', 0), ('bar55', 0), ('bar55_2', 0), ('blackie', 0), ('cold_water', 0), ('donna', 0),
    ('donna_2', 0), ('grand_canyon_1', 180), ('grand_canyon_2', 0), ('grand_canyon_3', 0), ('jesper', 0),
    ('jesper_2', 0), ('new_wave_1', 90), ('new_wave_2', 0), ('pool', 0), ('pool_2', 270), ('skagen', 0),
    ('skagen_2', 0), ('snow', 0), ('spiff', 0), ('spiff_2', 0), ('sunset', 0), ('wayne', 90)]] + [
    (f'gnome-{n}.jpg', f'{FACES}{n}.jpg', 0) for n in [
        'astronaut', 'bicycle', 'book', 'cat', 'chess', 'coffee', 'coffee2', 'dice', 'fish', 'grapes', 'headphones',
        'hummingbird', 'launch', 'mountain', 'penguin', 'plane', 'puppy', 'sunflower', 'sunset', 'surfer',
        'tomatoes', 'tree']] + [
    ('skimage-astronaut.jpg', f'{SKI}astronaut.png', 0),
    ('skimage-camera.jpg', f'{SKI}camera.png', 0),
    ('skimage-chelsea.jpg', f'{SKI}chelsea.png', 0),
    ('skimage-coffee.jpg', f'{SKI}coffee.png', 0),
    ('skimage-rocket.jpg', f'{SKI}rocket.jpg', 0),
    ('matplotlib-grace_hopper.jpg', f'{MPL}grace_hopper.jpg', 0),
    ('lomiri-aitzgorri.jpg', f'{LOM16}aitzgorri_by_Aitzol_Berasategi.jpg', 0),
    ('lomiri-friends.jpg', f'{LOM16}friends_by_Aitzol_Berasategi.jpg', 0),
    ('lomiri-life.jpg', f'{LOM16}life_by_Aitzol_Berasategi.jpg', 0),
    ('lomiri-picosdeeuropa.jpg', f'{LOM16}picosdeeuropa_by_Aitzol_Berasategi.jpg', 0),
    ('lomiri-sunset.jpg', f'{LOM16}sunset_by_Aitzol_Berasategi.jpg', 0),
    ('lomiri-seeding.jpg', f'{LOM16}seeding_by_Clements_Engelhardt.jpg', 0),
    ('lomiri-wine.jpg', f'{LOM16}Wine_by_Jakkub_Mede.jpg', 0),
    ('lomiri-fig.jpg', f'{LOM16}Picture_0B_by_freespace.jpg', 0),
    ('lomiri-kleiber.jpg', f'{LOM20}Kleiber_by_Lukas_Baubkus.jpg', 0),
    ('kde-fallen_leaf.jpg', f'{KDE}FallenLeaf/contents/images/1280x800.jpg', 0),
    ('kde-path.jpg', f'{KDE}Path/contents/images/1280x800.jpg', 0),
    ('kde-summer_1am.jpg', f'{KDE}summer_1am/contents/images/1280x800.jpg', 0),
    ('kde-evening_glow.jpg', f'{KDE}EveningGlow/contents/images/1280x800.jpg', 0),
    ('kde-colorful_cups.jpg', f'{KDE}ColorfulCups/contents/images/2560x1600.jpg', 0),
    ('kde-grey.jpg', f'{KDE}Grey/contents/images/1280x800.jpg', 0),
    ('kde-by_the_water.jpg', f'{KDE}BytheWater/contents/images/1280x800.jpg', 0),
    ('mate-ladybird.jpg', f'{MATE}LadyBird.jpg', 0),
    ('mate-dune.jpg', f'{MATE}Dune.jpg', 0),
]


def main():
    root = sys.argv[1]
    out = os.path.join(os.path.dirname(os.path.abspath(__file__)), 'photos')
    os.makedirs(out, exist_ok=True)
    for name, rel, angle in SOURCES:
        im = ImageOps.exif_transpose(Image.open(os.path.join(root, rel))).convert('RGB')
        if angle:
            im = im.rotate(-angle, expand=True)
        im.thumbnail((512, 512), Image.LANCZOS)
        im.save(os.path.join(out, name), 'JPEG', quality=85)
        print(f'{name}\t{im.width}x{im.height}\t{rel}')
    print(f'{len(SOURCES)} photos')


if __name__ == '__main__':
    main()
