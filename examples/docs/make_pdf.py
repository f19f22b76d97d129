"""Write en/great_wall_of_china.pdf: a one-page PDF made by hand (no PDF library needed).

Run from this folder: python make_pdf.py
"""

from __future__ import annotations

from pathlib import Path

TITLE = "The Great Wall of China"
LINES = [
    "The Great Wall of China",
    "",
    "The Great Wall of China is a series of fortifications built across the northern borders of China.",
    "Most of the existing wall was built during the Ming dynasty, which ruled from 1368 to 1644.",
    "A survey published in 2012 measured all sections of the wall at 21,196 kilometres.",
    "",
    "The wall was declared a UNESCO World Heritage Site in 1987.",
    "The section at Badaling, north of Beijing, is the most visited part of the wall.",
]


def _escape(text: str) -> str:
    return text.replace("\\", "\\\\").replace("(", "\\(").replace(")", "\\)")


def make_pdf(path: Path) -> None:
    ops = ["BT", "/F1 11 Tf", "14 TL", "72 740 Td"]
    for line in LINES:
        ops.append(f"({_escape(line)}) Tj T*")
    ops.append("ET")
    stream = "\n".join(ops).encode("latin-1")
    objects = [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
        b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources << /Font << /F1 4 0 R >> >> "
        b"/Contents 5 0 R >>",
        b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
        b"<< /Length " + str(len(stream)).encode() + b" >>\nstream\n" + stream + b"\nendstream",
        b"<< /Title (" + _escape(TITLE).encode("latin-1") + b") /Producer (ragmeter examples) >>",
    ]
    out = bytearray(b"%PDF-1.4\n")
    offsets = []
    for i, body in enumerate(objects, start=1):
        offsets.append(len(out))
        out += f"{i} 0 obj\n".encode() + body + b"\nendobj\n"
    xref = len(out)
    out += f"xref\n0 {len(objects) + 1}\n0000000000 65535 f \n".encode()
    for off in offsets:
        out += f"{off:010d} 00000 n \n".encode()
    out += f"trailer\n<< /Size {len(objects) + 1} /Root 1 0 R /Info 6 0 R >>\nstartxref\n{xref}\n%%EOF\n".encode()
    path.write_bytes(bytes(out))


if __name__ == "__main__":
    make_pdf(Path(__file__).with_name("en") / "great_wall_of_china.pdf")
