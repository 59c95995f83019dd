"""Generate a large Global-PIQA-layout TSV with Arabic (Darija) and Tamil text for benchmarks.

python benchmarks/make_large.py OUT.tsv [N=100000]
"""

from __future__ import annotations

import random
import sys

AR_PROMPTS = [
    "كيفاش نسخن الما بلا كهرباء",
    "باش نغسل الزربية الكبيرة",
    "كيفاش نحفظ الخبز يبقى طري",
    "باش نبرد الدار في الصيف",
]
AR_SOLS = [
    ("حط الكاس فوق النار", "حط الكاس تحت الما"),
    ("استعمل الما السخون", "استعمل الما البارد"),
    ("دير الخبز في كيس", "دير الخبز في الشمس"),
]
TA_PROMPTS = ["தண்ணீரை எப்படி சூடாக்குவது", "துணிகளை விரைவாக உலர்த்த", "அரிசியை எப்படி சமைப்பது"]
TA_SOLS = [("அடுப்பில் வைக்கவும்", "குளிர்சாதனத்தில் வைக்கவும்"), ("வெயிலில் காய வைக்கவும்", "நிழலில் காய வைக்கவும்")]


def main() -> None:
    out = sys.argv[1]
    n = int(sys.argv[2]) if len(sys.argv) > 2 else 100_000
    rng = random.Random(7)
    with open(out, "w", encoding="utf-8") as fh:
        fh.write("id\tprompt\tsolution0\tsolution1\tlabel\tdialect\tcategory\tsource\n")
        for i in range(n):
            arabic = i % 2 == 0
            prompts, sols = (AR_PROMPTS, AR_SOLS) if arabic else (TA_PROMPTS, TA_SOLS)
            a, b = rng.choice(sols)
            prompt = f"{rng.choice(prompts)} {i}"
            dialect = rng.choice(["Algerian", "Moroccan"]) if arabic else "Tamil"
            fh.write(
                f"x{i}\t{prompt}\t{a}\t{b}\t{rng.randint(0, 1)}\t{dialect}\t{rng.choice(['cooking', 'cleaning', 'repairs'])}\twritten\n"
            )


if __name__ == "__main__":
    main()
