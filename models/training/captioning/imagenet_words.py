"""ImageNet classes -> captioner vocabulary words: the words a caption may use to name what the ImageNet classifier
(models/mobilenet-v2-imagenet, 1000 classes; class i = line i of its labels.txt) sees, for constrained beam search
(constrained.py). Written from the class names alone, category by category, without looking at which photos of any
evaluation set would gain from it:

  * each class maps to the plain word(s) a person would use for the thing (dog breeds -> dog; cats -> cat; every bird
    -> bird, with duck, swan, chicken... where the vocabulary has the finer word), singular and plural where the
    vocabulary has both, so that "two dogs" meets the constraint as "a dog" does;
  * an animal with no word of its own in the vocabulary maps to "animal" (a lion, a wolf, a zebra: "animal" is true
    of it; "dog" or "cat" would not be), except reptiles, molluscs and the like, which map to nothing (no
    lizard, turtle, snail or crab in the vocabulary);
  * a thing maps to its own word or to a plainly true broader one (espresso -> coffee, cup; airliner -> plane; alp ->
    mountain; lakeside -> lake; seashore -> beach, ocean, shore); classes with no honest word in the vocabulary
    (abacus, barometer, a kind of screw...) and classes whose name is a part or a trait rather than a thing in the
    photo (bubble, ear, hip, velvet, wool, web site, jigsaw puzzle...) map to nothing.

Every word is checked against a vocabulary (check_words); MAPPING_VERSION names this table in results.

  /usr/bin/python3 models/training/captioning/imagenet_words.py   # prints how many classes map, by word
"""
import os

MAPPING_VERSION = "imagenet_words v1"

DOG = ("dog", "dogs", "puppy", "puppies")
CAT = ("cat", "cats", "kitty")
BIRD = ("bird", "birds")
FISH = ("fish", "fishes")
ANIMAL = ("animal", "animals")
INSECT = ("insect", "bug")
MONKEY = ("monkey",)

# (first class, last class, words, what the range holds), inclusive; CLASSES below overrides single classes.
RANGES = [
    (0, 6, FISH, "fish: tench, goldfish, sharks, rays"),
    (7, 24, BIRD, "birds: cock, hen, ostrich, finches, jay, magpie, eagle, vulture, owl..."),
    (25, 29, (), "salamanders, newt, axolotl: no word"),
    (30, 32, ("frog",), "frogs"),
    (33, 48, (), "turtles, lizards, chameleons: no word"),
    (49, 50, ("crocodile",), "crocodile, alligator"),
    (51, 51, (), "triceratops"),
    (52, 68, ("snake",), "snakes"),
    (69, 71, (), "trilobite, harvestman, scorpion"),
    (72, 77, ("spider",), "spiders"),
    (78, 79, (), "tick, centipede"),
    (80, 100, BIRD, "birds: grouse, peacock, parrots, hummingbird, toucan, ducks, goose, swan"),
    (101, 101, ("elephant",), "tusker"),
    (102, 106, ANIMAL, "echidna, platypus, wallaby, koala, wombat"),
    (107, 126, (), "jellyfish, anemone, coral, worms, snails, slugs, nautilus, crabs, lobsters, isopod: no word"),
    (127, 146, BIRD, "water birds: storks, flamingo, herons, crane, waders, pelican, penguin, albatross"),
    (147, 149, ANIMAL, "whales, dugong"),
    (150, 150, ("seal",), "sea lion"),
    (151, 268, DOG, "dog breeds"),
    (269, 272, ANIMAL, "wolves, coyote"),
    (273, 275, DOG, "dingo, dhole, African hunting dog: wild dogs"),
    (276, 280, ANIMAL, "hyena, foxes"),
    (281, 285, CAT, "domestic cats"),
    (286, 293, ANIMAL, "big cats"),
    (294, 297, ("bear",), "bears"),
    (298, 299, ANIMAL, "mongoose, meerkat"),
    (300, 320, INSECT, "beetles, fly, bee, ant, grasshopper, cricket, mantis, cicada, dragonfly..."),
    (321, 326, ("butterfly", "insect"), "butterflies"),
    (327, 329, (), "starfish, sea urchin, sea cucumber"),
    (330, 332, ("rabbit", "bunny"), "rabbits, hare"),
    (333, 338, ANIMAL, "hamster, porcupine, squirrel, marmot, beaver, guinea pig"),
    (339, 339, ("horse", "horses"), "sorrel"),
    (340, 344, ANIMAL, "zebra, pigs, boar, warthog, hippopotamus"),
    (345, 347, ("cow", "cows", "bull", "bulls"), "ox, water buffalo, bison"),
    (348, 349, ("sheep",), "ram, bighorn"),
    (350, 350, ("goat", "goats"), "ibex"),
    (351, 353, ANIMAL, "antelopes"),
    (354, 354, ("camel", "camels"), "Arabian camel"),
    (355, 364, ANIMAL, "llama, weasel, mink, polecat, ferret, otter, skunk, badger, armadillo, sloth"),
    (365, 384, MONKEY, "apes, monkeys, lemurs"),
    (385, 386, ("elephant",), "elephants"),
    (387, 388, ANIMAL, "pandas"),
    (389, 397, FISH, "fish: barracouta, eel, salmon, reef fish, sturgeon, gar, lionfish, puffer"),
]

CLASSES = {
    # birds and animals with a finer word than the range's
    7: ("chicken", "chickens", "bird"), 8: ("chicken", "chickens", "bird"),
    97: ("duck", "ducks", "bird"), 98: ("duck", "ducks", "bird"), 99: ("geese", "bird"),
    100: ("swan", "swans", "bird"), 144: ("pelican", "bird"), 292: ("tiger",), 309: ("bee", "insect", "bug"),
    335: ("squirrel",), 148: ("dolphin", "animal"),
    # things (398-999): own word or a plainly true broader one; unlisted ones map to nothing
    401: ("accordion",), 402: ("guitar",), 403: ("ship", "boat"), 404: ("plane", "airplane", "jet"),
    405: ("balloon",), 407: ("ambulance",), 412: ("trashcan",), 414: ("backpack",),
    417: ("balloon", "balloons"), 418: ("pen",), 420: ("guitar",), 423: ("chair",),
    425: ("barn",), 427: ("barrel",), 428: ("wheelbarrow",), 429: ("baseball", "ball"),
    430: ("basketball", "ball"), 433: ("cap",), 434: ("towel",), 435: ("bathtub", "tub"), 436: ("car",),
    440: ("bottle", "beer"), 441: ("glass", "beer"), 443: ("bib",), 444: ("bicycle", "bike"), 445: ("bikini",),
    447: ("binoculars",), 449: ("boat", "house"), 450: ("sled",), 453: ("book",),
    454: ("book", "store", "shop"), 457: ("tie",), 460: ("pier",), 462: ("broom",), 463: ("bucket",),
    466: ("train",), 468: ("car",), 470: ("candle", "candles"), 472: ("canoe",), 474: ("sweater",),
    479: ("wheel", "car"), 480: ("atm",), 484: ("boat", "sailboat"),
    487: ("phone", "cellphone"), 488: ("chain",), 489: ("fence",), 491: ("chainsaw",),
    497: ("church",), 498: ("theater",), 504: ("mug", "cup", "coffee"),
    505: ("coffee", "pot"), 508: ("computer",), 509: ("candy", "store", "shop"), 510: ("ship", "boat"),
    511: ("car",), 514: ("boots",), 515: ("hat", "cowboy"), 517: ("crane",),
    518: ("helmet",), 519: ("box",), 522: ("croquet", "ball"),
    526: ("desk",), 527: ("computer",), 528: ("telephone", "phone"), 531: ("watch",), 532: ("table",),
    536: ("dock",), 537: ("sled", "dogs", "dog"), 540: ("platform",), 541: ("drum", "drums"),
    546: ("guitar",), 547: ("train",), 550: ("coffee",),
    552: ("feather", "boa"), 554: ("boat",), 555: ("firetruck", "truck"), 557: ("flag", "pole"),
    558: ("flute",), 559: ("chair",), 560: ("helmet", "football"), 562: ("fountain",),
    563: ("pen",), 564: ("bed",), 565: ("train",), 567: ("pan",), 568: ("fur", "coat"), 569: ("truck",),
    570: ("mask",), 572: ("glass",), 574: ("golf", "ball"),
    575: ("cart", "golf"), 576: ("boat",), 578: ("gown", "dress"), 579: ("piano",), 580: ("greenhouse",),
    582: ("grocery", "store"), 588: ("basket",),
    603: ("horse", "cart"), 607: ("pumpkin",), 608: ("jeans",), 609: ("jeep",),
    610: ("jersey", "shirt"), 612: ("cart",), 614: ("robe",), 617: ("coat",), 620: ("laptop", "computer"),
    625: ("boat",), 627: ("limousine", "car"), 628: ("ship", "boat"),
    638: ("swimsuit",), 639: ("swimsuit",), 643: ("mask",),
    650: ("microphone",), 652: ("uniform", "military"), 654: ("bus", "van"), 655: ("skirt",), 656: ("van",),
    657: ("rocket",), 658: ("glove", "gloves"), 659: ("bowl",), 661: ("car",),
    664: ("monitor", "computer", "screen"), 665: ("scooter",), 667: ("cap",),
    670: ("scooter",), 671: ("bike", "bicycle"), 672: ("tent",), 673: ("mouse", "computer"), 675: ("truck", "van"),
    676: ("muzzle",), 679: ("necklace",), 681: ("computer", "laptop"), 690: ("cart",),
    693: ("paddle",), 697: ("pajamas",), 701: ("parachute",),
    703: ("bench",), 705: ("train",), 706: ("patio",), 707: ("phone", "telephone"), 716: ("fence",),
    717: ("truck",), 718: ("pier",), 721: ("pillow",), 722: ("ball",), 724: ("ship", "boat"), 725: ("pitcher",),
    726: ("plane",), 750: ("blanket",),
    728: ("bag",), 732: ("camera",), 733: ("pole",), 734: ("police", "van"), 736: ("table",),
    737: ("bottle", "soda"), 738: ("pot", "plant"), 746: ("puck",),
    748: ("purse", "bag"), 751: ("car",), 752: ("racket", "racquet"),
    759: ("camera",), 760: ("refrigerator",), 762: ("restaurant",), 763: ("gun",), 764: ("gun",),
    765: ("chair",), 768: ("rugby", "ball"), 770: ("shoe", "shoes", "sneakers"), 774: ("sandals",),
    779: ("bus",), 780: ("boat", "sailboat"), 782: ("screen",),
    788: ("shoe", "store"), 790: ("basket",), 791: ("cart",),
    792: ("shovel",), 795: ("ski", "skis", "skier"), 796: ("mask",), 797: ("sleeping", "bag"),
    802: ("snowmobile",), 803: ("truck",), 805: ("soccer", "ball"), 806: ("socks",), 808: ("hat",),
    809: ("bowl",), 812: ("rocket",), 814: ("boat",), 817: ("car",), 819: ("stage",),
    820: ("train",), 821: ("bridge",), 822: ("drum", "drums"), 825: ("wall",), 827: ("stove",),
    829: ("train",), 831: ("couch", "sofa"), 834: ("suit",),
    836: ("sunglasses",), 837: ("sunglasses",), 839: ("bridge",), 841: ("sweatshirt",), 842: ("trunks",),
    843: ("swing",), 850: ("teddy", "bear"), 851: ("tv",),
    852: ("tennis", "ball"), 857: ("chair",), 858: ("roof",), 861: ("toilet",),
    863: ("pole",), 864: ("truck",), 865: ("toy", "toys", "store"), 866: ("tractor",), 867: ("truck",),
    869: ("coat",), 870: ("tricycle",), 871: ("boat", "sailboat"), 872: ("tripod",),
    874: ("bus",), 876: ("tub",), 879: ("umbrella",), 880: ("unicycle",),
    888: ("bridge",), 889: ("violin",), 890: ("volleyball", "ball"),
    895: ("plane", "jet"), 898: ("bottle",),
    903: ("wig",), 906: ("tie",), 907: ("bottle", "wine"), 908: ("plane",),
    912: ("fence",), 913: ("boat",), 914: ("boat", "sailboat"), 915: ("tent",), 917: ("book",),
    919: ("sign",), 920: ("traffic",), 921: ("book",), 923: ("plate", "food"),
    # food and drink
    924: ("food",), 925: ("food",), 926: ("food",), 927: ("cake", "food"),
    928: ("cream", "food"), 930: ("bread", "food"), 931: ("bread", "food"),
    932: ("bread", "food"), 933: ("hamburgers", "food"), 934: ("food",), 935: ("potato", "food"),
    936: ("food",), 937: ("food",), 938: ("food",), 939: ("food",), 940: ("pumpkin", "food"),
    941: ("pumpkin", "food"), 942: ("pumpkin", "food"), 943: ("food",), 944: ("food",), 945: ("food",),
    946: ("food",), 948: ("apple", "apples", "fruit"), 949: ("fruit",),
    950: ("orange", "fruit"), 951: ("fruit",), 952: ("fruit",), 953: ("fruit",), 954: ("fruit",),
    955: ("fruit",), 956: ("fruit",), 957: ("fruit",), 958: ("hay",), 959: ("pasta", "food"),
    960: ("chocolate",), 961: ("bread", "food"), 962: ("food",), 963: ("pizza",), 964: ("food",),
    965: ("food",), 966: ("wine", "glass"), 967: ("coffee", "cup"), 968: ("cup", "mug"), 969: ("drink", "cup"),
    # landscapes, people, plants
    970: ("mountain", "mountains", "snowcapped"), 972: ("cliff", "cliffs"), 973: ("underwater",),
    974: ("geyser",), 975: ("lake",), 976: ("cliff", "cliffs", "ocean", "sea"),
    977: ("beach", "sand", "ocean", "shore"), 978: ("beach", "ocean", "shore", "sea", "seashore", "shoreline"),
    979: ("valley", "mountains", "mountain"), 980: ("mountain",), 981: ("baseball", "player"),
    982: ("groom", "wedding"), 983: ("scuba", "diver", "underwater"), 984: ("flowers", "field"),
    985: ("flower", "flowers"), 986: ("flower", "flowers"), 987: ("corn",),
    
}


def class_words():
    """[1000] tuples of words, class i = labels line i (RANGES, then CLASSES over them)."""
    out = [()] * 1000
    for a, b, words, _ in RANGES:
        for i in range(a, b + 1):
            out[i] = tuple(words)
    for i, words in CLASSES.items():
        out[i] = tuple(words)
    return out


def vocab_words(vocab):
    """class_words(), checked against `vocab` (a set or dict of the captioner's tokens): raises ValueError naming
    every word of the table the captioner cannot say (a constraint on such a word could never be met)."""
    words = class_words()
    bad = ["%d:%s" % (i, w) for i, ws in enumerate(words) for w in ws if w not in vocab]
    if bad:
        raise ValueError("imagenet_words: not in the captioner's vocabulary: " + ", ".join(bad))
    return words


def main():
    import collections
    here = os.path.dirname(os.path.abspath(__file__))
    root = os.path.join(here, "..", "..")
    vocab = set(open(os.path.join(root, "flickr8k-mobilenet", "vocab.txt")).read().split("\n"))
    labels = open(os.path.join(root, "mobilenet-v2-imagenet", "labels.txt")).read().rstrip("\n").split("\n")
    kept = vocab_words(vocab)
    print("%s: %d of %d classes map to captioner words; %d distinct words"
          % (MAPPING_VERSION, sum(1 for k in kept if k), len(labels), len({w for k in kept for w in k})))
    print("no word:", ", ".join(labels[i].split(",")[0] for i, k in enumerate(kept) if not k))
    first = collections.Counter(k[0] for k in kept if k)
    print("classes by first word:", ", ".join("%s %d" % kv for kv in first.most_common()))


if __name__ == "__main__":
    main()
