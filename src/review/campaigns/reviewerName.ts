/**
 * Reviewer names (a SAML NameID, the names a campaign is given, `as`/`--as`) compared as one
 * identity. JavaScript's toLowerCase folds beyond ASCII: the Kelvin sign K (U+212A) lower-cases to
 * `k`, so a NameID `Kate@…` spelled with it answered to kate@…'s items. A name is compared after
 * NFKC with only ASCII letters folded to lower case. NFKC alone would still make the Kelvin sign
 * a K, so a name that cannot be told apart from another is refused where it arrives: one holding a
 * character that normalisation turns into another (the Kelvin sign, fullwidth letters, ligatures;
 * a decomposed é only composes), or one mixing scripts within a part (Latin with Cyrillic: `kаte`
 * with a Cyrillic а) beyond the mixes of UTS #39's "highly restrictive" level (Latin with Han and
 * Hiragana/Katakana, Bopomofo or Hangul).
 */

/** Every Unicode 16 script but Common and Inherited (which any script uses: digits, `@`, `.`, marks). */
const SCRIPTS = (
  "Latin Cyrillic Greek Han Hiragana Katakana Hangul Bopomofo Arabic Hebrew Armenian Georgian Devanagari " +
  "Bengali Gurmukhi Gujarati Oriya Tamil Telugu Kannada Malayalam Sinhala Thai Lao Tibetan Myanmar Khmer " +
  "Ethiopic Cherokee Mongolian Syriac Thaana Nko Tifinagh Yi Adlam Ahom Anatolian_Hieroglyphs Avestan " +
  "Balinese Bamum Bassa_Vah Batak Bhaiksuki Brahmi Braille Buginese Buhid Canadian_Aboriginal Carian " +
  "Caucasian_Albanian Chakma Cham Chorasmian Coptic Cuneiform Cypriot Cypro_Minoan Deseret Dives_Akuru Dogra " +
  "Duployan Egyptian_Hieroglyphs Elbasan Elymaic Garay Glagolitic Gothic Grantha Gunjala_Gondi " +
  "Gurung_Khema Hanifi_Rohingya Hanunoo Hatran Imperial_Aramaic Inscriptional_Pahlavi Inscriptional_Parthian " +
  "Javanese Kaithi Kawi Kayah_Li Kharoshthi Khitan_Small_Script Khojki Khudawadi Kirat_Rai Lepcha Limbu " +
  "Linear_A Linear_B Lisu Lycian Lydian Mahajani Makasar Mandaic Manichaean Marchen Masaram_Gondi " +
  "Medefaidrin Meetei_Mayek Mende_Kikakui Meroitic_Cursive Meroitic_Hieroglyphs Miao Modi Mro Multani " +
  "Nabataean Nag_Mundari Nandinagari New_Tai_Lue Newa Nushu Nyiakeng_Puachue_Hmong Ogham Ol_Chiki Ol_Onal " +
  "Old_Hungarian Old_Italic Old_North_Arabian Old_Permic Old_Persian Old_Sogdian Old_South_Arabian " +
  "Old_Turkic Old_Uyghur Osage Osmanya Pahawh_Hmong Palmyrene Pau_Cin_Hau Phags_Pa Phoenician " +
  "Psalter_Pahlavi Rejang Runic Samaritan Saurashtra Sharada Shavian Siddham SignWriting Sogdian " +
  "Sora_Sompeng Soyombo Sundanese Sunuwar Syloti_Nagri Tagalog Tagbanwa Tai_Le Tai_Tham Tai_Viet Takri " +
  "Tangsa Tangut Todhri Toto Tulu_Tigalari Ugaritic Vai Vithkuqi Wancho Warang_Citi Yezidi Zanabazar_Square"
)
  .split(" ")
  .map((name) => ({ name, pattern: new RegExp(`^\\p{Script=${name}}$`, "u") }));

const ANY_SCRIPT = /[\p{Script=Common}\p{Script=Inherited}]/u;

/** The script mixes one name may hold (UTS #39, "highly restrictive"): Japanese, Chinese, Korean with Latin. */
const ALLOWED_MIXES = [
  ["Latin", "Han", "Hiragana", "Katakana"],
  ["Latin", "Han", "Bopomofo"],
  ["Latin", "Han", "Hangul"],
];

function scriptOf(char: string): string {
  if (ANY_SCRIPT.test(char)) return "";
  // A script newer than this list: unknown, so never counted as the same as another.
  return SCRIPTS.find((s) => s.pattern.test(char))?.name ?? `unknown U+${char.codePointAt(0)!.toString(16)}`;
}

/** Why a name cannot be a reviewer's, or undefined when it can. */
export function reviewerNameProblem(name: string): string | undefined {
  // Per character: a decomposed é composes (the same name), but the Kelvin sign is a canonical
  // singleton (NFC alone makes it K), and fullwidth letters and ligatures are compatibility forms.
  if ([...name].some((char) => char.normalize("NFKC") !== char))
    return "holds characters (such as the Kelvin sign K or fullwidth letters) that normalise to other letters";
  // Script by script within each part of the name (an email's local part, each domain label):
  // иван@example.ru is two scripts in two parts, kаte@… is two in one.
  for (const part of name.split(/[@.]/)) {
    const scripts = new Set([...part].map(scriptOf).filter(Boolean));
    if (scripts.size > 1 && !ALLOWED_MIXES.some((mix) => [...scripts].every((s) => mix.includes(s))))
      return `mixes scripts (${[...scripts].join(", ")}) in "${part}", so it can read as another name`;
  }
  return undefined;
}

/** The form reviewer names are stored and compared in: NFKC, ASCII letters in lower case, nothing else folded. */
export function canonicalReviewerName(name: string): string {
  return name.normalize("NFKC").replace(/[A-Z]/g, (c) => c.toLowerCase());
}
