// Shared text utilities of the Werkbaum notation: character classes, status and size
// tables, line splitting. Everything here is computed once at load time.
(function (W) {
  'use strict';

  // NAME_CHARS is the body of a regex character class equal to [\p{L}\p{N}._-] (Unicode
  // letters and digits, dot, underscore, dash). goja's RE2 backend silently matches nothing
  // for \p{...} (NOTATION.md §26), so the Unicode 15 ranges are spelled out; they need the
  // `u` flag because of the astral ranges.
  var LETTERS_DIGITS =
    '\\u0030-\\u0039\\u0041-\\u005a\\u0061-\\u007a\\u00aa\\u00b2-\\u00b3\\u00b5\\u00b9-\\u00ba' +
    '\\u00bc-\\u00be\\u00c0-\\u00d6\\u00d8-\\u00f6\\u00f8-\\u02c1\\u02c6-\\u02d1\\u02e0-\\u02e4' +
    '\\u02ec\\u02ee\\u0370-\\u0374\\u0376-\\u0377\\u037a-\\u037d\\u037f\\u0386\\u0388-\\u038a' +
    '\\u038c\\u038e-\\u03a1\\u03a3-\\u03f5\\u03f7-\\u0481\\u048a-\\u052f\\u0531-\\u0556\\u0559' +
    '\\u0560-\\u0588\\u05d0-\\u05ea\\u05ef-\\u05f2\\u0620-\\u064a\\u0660-\\u0669\\u066e-\\u066f' +
    '\\u0671-\\u06d3\\u06d5\\u06e5-\\u06e6\\u06ee-\\u06fc\\u06ff\\u0710\\u0712-\\u072f' +
    '\\u074d-\\u07a5\\u07b1\\u07c0-\\u07ea\\u07f4-\\u07f5\\u07fa\\u0800-\\u0815\\u081a\\u0824' +
    '\\u0828\\u0840-\\u0858\\u0860-\\u086a\\u0870-\\u0887\\u0889-\\u088f\\u08a0-\\u08c9' +
    '\\u0904-\\u0939\\u093d\\u0950\\u0958-\\u0961\\u0966-\\u096f\\u0971-\\u0980\\u0985-\\u098c' +
    '\\u098f-\\u0990\\u0993-\\u09a8\\u09aa-\\u09b0\\u09b2\\u09b6-\\u09b9\\u09bd\\u09ce' +
    '\\u09dc-\\u09dd\\u09df-\\u09e1\\u09e6-\\u09f1\\u09f4-\\u09f9\\u09fc\\u0a05-\\u0a0a' +
    '\\u0a0f-\\u0a10\\u0a13-\\u0a28\\u0a2a-\\u0a30\\u0a32-\\u0a33\\u0a35-\\u0a36\\u0a38-\\u0a39' +
    '\\u0a59-\\u0a5c\\u0a5e\\u0a66-\\u0a6f\\u0a72-\\u0a74\\u0a85-\\u0a8d\\u0a8f-\\u0a91' +
    '\\u0a93-\\u0aa8\\u0aaa-\\u0ab0\\u0ab2-\\u0ab3\\u0ab5-\\u0ab9\\u0abd\\u0ad0\\u0ae0-\\u0ae1' +
    '\\u0ae6-\\u0aef\\u0af9\\u0b05-\\u0b0c\\u0b0f-\\u0b10\\u0b13-\\u0b28\\u0b2a-\\u0b30' +
    '\\u0b32-\\u0b33\\u0b35-\\u0b39\\u0b3d\\u0b5c-\\u0b5d\\u0b5f-\\u0b61\\u0b66-\\u0b6f' +
    '\\u0b71-\\u0b77\\u0b83\\u0b85-\\u0b8a\\u0b8e-\\u0b90\\u0b92-\\u0b95\\u0b99-\\u0b9a\\u0b9c' +
    '\\u0b9e-\\u0b9f\\u0ba3-\\u0ba4\\u0ba8-\\u0baa\\u0bae-\\u0bb9\\u0bd0\\u0be6-\\u0bf2' +
    '\\u0c05-\\u0c0c\\u0c0e-\\u0c10\\u0c12-\\u0c28\\u0c2a-\\u0c39\\u0c3d\\u0c58-\\u0c5a' +
    '\\u0c5c-\\u0c5d\\u0c60-\\u0c61\\u0c66-\\u0c6f\\u0c78-\\u0c7e\\u0c80\\u0c85-\\u0c8c' +
    '\\u0c8e-\\u0c90\\u0c92-\\u0ca8\\u0caa-\\u0cb3\\u0cb5-\\u0cb9\\u0cbd\\u0cdc-\\u0cde' +
    '\\u0ce0-\\u0ce1\\u0ce6-\\u0cef\\u0cf1-\\u0cf2\\u0d04-\\u0d0c\\u0d0e-\\u0d10\\u0d12-\\u0d3a' +
    '\\u0d3d\\u0d4e\\u0d54-\\u0d56\\u0d58-\\u0d61\\u0d66-\\u0d78\\u0d7a-\\u0d7f\\u0d85-\\u0d96' +
    '\\u0d9a-\\u0db1\\u0db3-\\u0dbb\\u0dbd\\u0dc0-\\u0dc6\\u0de6-\\u0def\\u0e01-\\u0e30' +
    '\\u0e32-\\u0e33\\u0e40-\\u0e46\\u0e50-\\u0e59\\u0e81-\\u0e82\\u0e84\\u0e86-\\u0e8a' +
    '\\u0e8c-\\u0ea3\\u0ea5\\u0ea7-\\u0eb0\\u0eb2-\\u0eb3\\u0ebd\\u0ec0-\\u0ec4\\u0ec6' +
    '\\u0ed0-\\u0ed9\\u0edc-\\u0edf\\u0f00\\u0f20-\\u0f33\\u0f40-\\u0f47\\u0f49-\\u0f6c' +
    '\\u0f88-\\u0f8c\\u1000-\\u102a\\u103f-\\u1049\\u1050-\\u1055\\u105a-\\u105d\\u1061' +
    '\\u1065-\\u1066\\u106e-\\u1070\\u1075-\\u1081\\u108e\\u1090-\\u1099\\u10a0-\\u10c5\\u10c7' +
    '\\u10cd\\u10d0-\\u10fa\\u10fc-\\u1248\\u124a-\\u124d\\u1250-\\u1256\\u1258\\u125a-\\u125d' +
    '\\u1260-\\u1288\\u128a-\\u128d\\u1290-\\u12b0\\u12b2-\\u12b5\\u12b8-\\u12be\\u12c0' +
    '\\u12c2-\\u12c5\\u12c8-\\u12d6\\u12d8-\\u1310\\u1312-\\u1315\\u1318-\\u135a\\u1369-\\u137c' +
    '\\u1380-\\u138f\\u13a0-\\u13f5\\u13f8-\\u13fd\\u1401-\\u166c\\u166f-\\u167f\\u1681-\\u169a' +
    '\\u16a0-\\u16ea\\u16ee-\\u16f8\\u1700-\\u1711\\u171f-\\u1731\\u1740-\\u1751\\u1760-\\u176c' +
    '\\u176e-\\u1770\\u1780-\\u17b3\\u17d7\\u17dc\\u17e0-\\u17e9\\u17f0-\\u17f9\\u1810-\\u1819' +
    '\\u1820-\\u1878\\u1880-\\u1884\\u1887-\\u18a8\\u18aa\\u18b0-\\u18f5\\u1900-\\u191e' +
    '\\u1946-\\u196d\\u1970-\\u1974\\u1980-\\u19ab\\u19b0-\\u19c9\\u19d0-\\u19da\\u1a00-\\u1a16' +
    '\\u1a20-\\u1a54\\u1a80-\\u1a89\\u1a90-\\u1a99\\u1aa7\\u1b05-\\u1b33\\u1b45-\\u1b4c' +
    '\\u1b50-\\u1b59\\u1b83-\\u1ba0\\u1bae-\\u1be5\\u1c00-\\u1c23\\u1c40-\\u1c49\\u1c4d-\\u1c7d' +
    '\\u1c80-\\u1c8a\\u1c90-\\u1cba\\u1cbd-\\u1cbf\\u1ce9-\\u1cec\\u1cee-\\u1cf3\\u1cf5-\\u1cf6' +
    '\\u1cfa\\u1d00-\\u1dbf\\u1e00-\\u1f15\\u1f18-\\u1f1d\\u1f20-\\u1f45\\u1f48-\\u1f4d' +
    '\\u1f50-\\u1f57\\u1f59\\u1f5b\\u1f5d\\u1f5f-\\u1f7d\\u1f80-\\u1fb4\\u1fb6-\\u1fbc\\u1fbe' +
    '\\u1fc2-\\u1fc4\\u1fc6-\\u1fcc\\u1fd0-\\u1fd3\\u1fd6-\\u1fdb\\u1fe0-\\u1fec\\u1ff2-\\u1ff4' +
    '\\u1ff6-\\u1ffc\\u2070-\\u2071\\u2074-\\u2079\\u207f-\\u2089\\u2090-\\u209c\\u2102\\u2107' +
    '\\u210a-\\u2113\\u2115\\u2119-\\u211d\\u2124\\u2126\\u2128\\u212a-\\u212d\\u212f-\\u2139' +
    '\\u213c-\\u213f\\u2145-\\u2149\\u214e\\u2150-\\u2189\\u2460-\\u249b\\u24ea-\\u24ff' +
    '\\u2776-\\u2793\\u2c00-\\u2ce4\\u2ceb-\\u2cee\\u2cf2-\\u2cf3\\u2cfd\\u2d00-\\u2d25\\u2d27' +
    '\\u2d2d\\u2d30-\\u2d67\\u2d6f\\u2d80-\\u2d96\\u2da0-\\u2da6\\u2da8-\\u2dae\\u2db0-\\u2db6' +
    '\\u2db8-\\u2dbe\\u2dc0-\\u2dc6\\u2dc8-\\u2dce\\u2dd0-\\u2dd6\\u2dd8-\\u2dde\\u2e2f' +
    '\\u3005-\\u3007\\u3021-\\u3029\\u3031-\\u3035\\u3038-\\u303c\\u3041-\\u3096\\u309d-\\u309f' +
    '\\u30a1-\\u30fa\\u30fc-\\u30ff\\u3105-\\u312f\\u3131-\\u318e\\u3192-\\u3195\\u31a0-\\u31bf' +
    '\\u31f0-\\u31ff\\u3220-\\u3229\\u3248-\\u324f\\u3251-\\u325f\\u3280-\\u3289\\u32b1-\\u32bf' +
    '\\u3400-\\u4dbf\\u4e00-\\ua48c\\ua4d0-\\ua4fd\\ua500-\\ua60c\\ua610-\\ua62b\\ua640-\\ua66e' +
    '\\ua67f-\\ua69d\\ua6a0-\\ua6ef\\ua717-\\ua71f\\ua722-\\ua788\\ua78b-\\ua7dc\\ua7f1-\\ua801' +
    '\\ua803-\\ua805\\ua807-\\ua80a\\ua80c-\\ua822\\ua830-\\ua835\\ua840-\\ua873\\ua882-\\ua8b3' +
    '\\ua8d0-\\ua8d9\\ua8f2-\\ua8f7\\ua8fb\\ua8fd-\\ua8fe\\ua900-\\ua925\\ua930-\\ua946' +
    '\\ua960-\\ua97c\\ua984-\\ua9b2\\ua9cf-\\ua9d9\\ua9e0-\\ua9e4\\ua9e6-\\ua9fe\\uaa00-\\uaa28' +
    '\\uaa40-\\uaa42\\uaa44-\\uaa4b\\uaa50-\\uaa59\\uaa60-\\uaa76\\uaa7a\\uaa7e-\\uaaaf\\uaab1' +
    '\\uaab5-\\uaab6\\uaab9-\\uaabd\\uaac0\\uaac2\\uaadb-\\uaadd\\uaae0-\\uaaea\\uaaf2-\\uaaf4' +
    '\\uab01-\\uab06\\uab09-\\uab0e\\uab11-\\uab16\\uab20-\\uab26\\uab28-\\uab2e\\uab30-\\uab5a' +
    '\\uab5c-\\uab69\\uab70-\\uabe2\\uabf0-\\uabf9\\uac00-\\ud7a3\\ud7b0-\\ud7c6\\ud7cb-\\ud7fb' +
    '\\uf900-\\ufa6d\\ufa70-\\ufad9\\ufb00-\\ufb06\\ufb13-\\ufb17\\ufb1d\\ufb1f-\\ufb28' +
    '\\ufb2a-\\ufb36\\ufb38-\\ufb3c\\ufb3e\\ufb40-\\ufb41\\ufb43-\\ufb44\\ufb46-\\ufbb1' +
    '\\ufbd3-\\ufd3d\\ufd50-\\ufd8f\\ufd92-\\ufdc7\\ufdf0-\\ufdfb\\ufe70-\\ufe74\\ufe76-\\ufefc' +
    '\\uff10-\\uff19\\uff21-\\uff3a\\uff41-\\uff5a\\uff66-\\uffbe\\uffc2-\\uffc7\\uffca-\\uffcf' +
    '\\uffd2-\\uffd7\\uffda-\\uffdc\\u{10000}-\\u{1000b}\\u{1000d}-\\u{10026}' +
    '\\u{10028}-\\u{1003a}\\u{1003c}-\\u{1003d}\\u{1003f}-\\u{1004d}\\u{10050}-\\u{1005d}' +
    '\\u{10080}-\\u{100fa}\\u{10107}-\\u{10133}\\u{10140}-\\u{10178}\\u{1018a}-\\u{1018b}' +
    '\\u{10280}-\\u{1029c}\\u{102a0}-\\u{102d0}\\u{102e1}-\\u{102fb}\\u{10300}-\\u{10323}' +
    '\\u{1032d}-\\u{1034a}\\u{10350}-\\u{10375}\\u{10380}-\\u{1039d}\\u{103a0}-\\u{103c3}' +
    '\\u{103c8}-\\u{103cf}\\u{103d1}-\\u{103d5}\\u{10400}-\\u{1049d}\\u{104a0}-\\u{104a9}' +
    '\\u{104b0}-\\u{104d3}\\u{104d8}-\\u{104fb}\\u{10500}-\\u{10527}\\u{10530}-\\u{10563}' +
    '\\u{10570}-\\u{1057a}\\u{1057c}-\\u{1058a}\\u{1058c}-\\u{10592}\\u{10594}-\\u{10595}' +
    '\\u{10597}-\\u{105a1}\\u{105a3}-\\u{105b1}\\u{105b3}-\\u{105b9}\\u{105bb}-\\u{105bc}' +
    '\\u{105c0}-\\u{105f3}\\u{10600}-\\u{10736}\\u{10740}-\\u{10755}\\u{10760}-\\u{10767}' +
    '\\u{10780}-\\u{10785}\\u{10787}-\\u{107b0}\\u{107b2}-\\u{107ba}\\u{10800}-\\u{10805}' +
    '\\u{10808}\\u{1080a}-\\u{10835}\\u{10837}-\\u{10838}\\u{1083c}\\u{1083f}-\\u{10855}' +
    '\\u{10858}-\\u{10876}\\u{10879}-\\u{1089e}\\u{108a7}-\\u{108af}\\u{108e0}-\\u{108f2}' +
    '\\u{108f4}-\\u{108f5}\\u{108fb}-\\u{1091b}\\u{10920}-\\u{10939}\\u{10940}-\\u{10959}' +
    '\\u{10980}-\\u{109b7}\\u{109bc}-\\u{109cf}\\u{109d2}-\\u{10a00}\\u{10a10}-\\u{10a13}' +
    '\\u{10a15}-\\u{10a17}\\u{10a19}-\\u{10a35}\\u{10a40}-\\u{10a48}\\u{10a60}-\\u{10a7e}' +
    '\\u{10a80}-\\u{10a9f}\\u{10ac0}-\\u{10ac7}\\u{10ac9}-\\u{10ae4}\\u{10aeb}-\\u{10aef}' +
    '\\u{10b00}-\\u{10b35}\\u{10b40}-\\u{10b55}\\u{10b58}-\\u{10b72}\\u{10b78}-\\u{10b91}' +
    '\\u{10ba9}-\\u{10baf}\\u{10c00}-\\u{10c48}\\u{10c80}-\\u{10cb2}\\u{10cc0}-\\u{10cf2}' +
    '\\u{10cfa}-\\u{10d23}\\u{10d30}-\\u{10d39}\\u{10d40}-\\u{10d65}\\u{10d6f}-\\u{10d85}' +
    '\\u{10e60}-\\u{10e7e}\\u{10e80}-\\u{10ea9}\\u{10eb0}-\\u{10eb1}\\u{10ec2}-\\u{10ec7}' +
    '\\u{10f00}-\\u{10f27}\\u{10f30}-\\u{10f45}\\u{10f51}-\\u{10f54}\\u{10f70}-\\u{10f81}' +
    '\\u{10fb0}-\\u{10fcb}\\u{10fe0}-\\u{10ff6}\\u{11003}-\\u{11037}\\u{11052}-\\u{1106f}' +
    '\\u{11071}-\\u{11072}\\u{11075}\\u{11083}-\\u{110af}\\u{110d0}-\\u{110e8}' +
    '\\u{110f0}-\\u{110f9}\\u{11103}-\\u{11126}\\u{11136}-\\u{1113f}\\u{11144}\\u{11147}' +
    '\\u{11150}-\\u{11172}\\u{11176}\\u{11183}-\\u{111b2}\\u{111c1}-\\u{111c4}' +
    '\\u{111d0}-\\u{111da}\\u{111dc}\\u{111e1}-\\u{111f4}\\u{11200}-\\u{11211}' +
    '\\u{11213}-\\u{1122b}\\u{1123f}-\\u{11240}\\u{11280}-\\u{11286}\\u{11288}' +
    '\\u{1128a}-\\u{1128d}\\u{1128f}-\\u{1129d}\\u{1129f}-\\u{112a8}\\u{112b0}-\\u{112de}' +
    '\\u{112f0}-\\u{112f9}\\u{11305}-\\u{1130c}\\u{1130f}-\\u{11310}\\u{11313}-\\u{11328}' +
    '\\u{1132a}-\\u{11330}\\u{11332}-\\u{11333}\\u{11335}-\\u{11339}\\u{1133d}\\u{11350}' +
    '\\u{1135d}-\\u{11361}\\u{11380}-\\u{11389}\\u{1138b}\\u{1138e}\\u{11390}-\\u{113b5}' +
    '\\u{113b7}\\u{113d1}\\u{113d3}\\u{11400}-\\u{11434}\\u{11447}-\\u{1144a}' +
    '\\u{11450}-\\u{11459}\\u{1145f}-\\u{11461}\\u{11480}-\\u{114af}\\u{114c4}-\\u{114c5}' +
    '\\u{114c7}\\u{114d0}-\\u{114d9}\\u{11580}-\\u{115ae}\\u{115d8}-\\u{115db}' +
    '\\u{11600}-\\u{1162f}\\u{11644}\\u{11650}-\\u{11659}\\u{11680}-\\u{116aa}\\u{116b8}' +
    '\\u{116c0}-\\u{116c9}\\u{116d0}-\\u{116e3}\\u{11700}-\\u{1171a}\\u{11730}-\\u{1173b}' +
    '\\u{11740}-\\u{11746}\\u{11800}-\\u{1182b}\\u{118a0}-\\u{118f2}\\u{118ff}-\\u{11906}' +
    '\\u{11909}\\u{1190c}-\\u{11913}\\u{11915}-\\u{11916}\\u{11918}-\\u{1192f}\\u{1193f}' +
    '\\u{11941}\\u{11950}-\\u{11959}\\u{119a0}-\\u{119a7}\\u{119aa}-\\u{119d0}\\u{119e1}' +
    '\\u{119e3}\\u{11a00}\\u{11a0b}-\\u{11a32}\\u{11a3a}\\u{11a50}\\u{11a5c}-\\u{11a89}' +
    '\\u{11a9d}\\u{11ab0}-\\u{11af8}\\u{11bc0}-\\u{11be0}\\u{11bf0}-\\u{11bf9}' +
    '\\u{11c00}-\\u{11c08}\\u{11c0a}-\\u{11c2e}\\u{11c40}\\u{11c50}-\\u{11c6c}' +
    '\\u{11c72}-\\u{11c8f}\\u{11d00}-\\u{11d06}\\u{11d08}-\\u{11d09}\\u{11d0b}-\\u{11d30}' +
    '\\u{11d46}\\u{11d50}-\\u{11d59}\\u{11d60}-\\u{11d65}\\u{11d67}-\\u{11d68}' +
    '\\u{11d6a}-\\u{11d89}\\u{11d98}\\u{11da0}-\\u{11da9}\\u{11db0}-\\u{11ddb}' +
    '\\u{11de0}-\\u{11de9}\\u{11ee0}-\\u{11ef2}\\u{11f02}\\u{11f04}-\\u{11f10}' +
    '\\u{11f12}-\\u{11f33}\\u{11f50}-\\u{11f59}\\u{11fb0}\\u{11fc0}-\\u{11fd4}' +
    '\\u{12000}-\\u{12399}\\u{12400}-\\u{1246e}\\u{12480}-\\u{12543}\\u{12f90}-\\u{12ff0}' +
    '\\u{13000}-\\u{1342f}\\u{13441}-\\u{13446}\\u{13460}-\\u{143fa}\\u{14400}-\\u{14646}' +
    '\\u{16100}-\\u{1611d}\\u{16130}-\\u{16139}\\u{16800}-\\u{16a38}\\u{16a40}-\\u{16a5e}' +
    '\\u{16a60}-\\u{16a69}\\u{16a70}-\\u{16abe}\\u{16ac0}-\\u{16ac9}\\u{16ad0}-\\u{16aed}' +
    '\\u{16b00}-\\u{16b2f}\\u{16b40}-\\u{16b43}\\u{16b50}-\\u{16b59}\\u{16b5b}-\\u{16b61}' +
    '\\u{16b63}-\\u{16b77}\\u{16b7d}-\\u{16b8f}\\u{16d40}-\\u{16d6c}\\u{16d70}-\\u{16d79}' +
    '\\u{16e40}-\\u{16e96}\\u{16ea0}-\\u{16eb8}\\u{16ebb}-\\u{16ed3}\\u{16f00}-\\u{16f4a}' +
    '\\u{16f50}\\u{16f93}-\\u{16f9f}\\u{16fe0}-\\u{16fe1}\\u{16fe3}\\u{16ff2}-\\u{16ff6}' +
    '\\u{17000}-\\u{18cd5}\\u{18cff}-\\u{18d1e}\\u{18d80}-\\u{18df2}\\u{1aff0}-\\u{1aff3}' +
    '\\u{1aff5}-\\u{1affb}\\u{1affd}-\\u{1affe}\\u{1b000}-\\u{1b122}\\u{1b132}' +
    '\\u{1b150}-\\u{1b152}\\u{1b155}\\u{1b164}-\\u{1b167}\\u{1b170}-\\u{1b2fb}' +
    '\\u{1bc00}-\\u{1bc6a}\\u{1bc70}-\\u{1bc7c}\\u{1bc80}-\\u{1bc88}\\u{1bc90}-\\u{1bc99}' +
    '\\u{1ccf0}-\\u{1ccf9}\\u{1d2c0}-\\u{1d2d3}\\u{1d2e0}-\\u{1d2f3}\\u{1d360}-\\u{1d378}' +
    '\\u{1d400}-\\u{1d454}\\u{1d456}-\\u{1d49c}\\u{1d49e}-\\u{1d49f}\\u{1d4a2}' +
    '\\u{1d4a5}-\\u{1d4a6}\\u{1d4a9}-\\u{1d4ac}\\u{1d4ae}-\\u{1d4b9}\\u{1d4bb}' +
    '\\u{1d4bd}-\\u{1d4c3}\\u{1d4c5}-\\u{1d505}\\u{1d507}-\\u{1d50a}\\u{1d50d}-\\u{1d514}' +
    '\\u{1d516}-\\u{1d51c}\\u{1d51e}-\\u{1d539}\\u{1d53b}-\\u{1d53e}\\u{1d540}-\\u{1d544}' +
    '\\u{1d546}\\u{1d54a}-\\u{1d550}\\u{1d552}-\\u{1d6a5}\\u{1d6a8}-\\u{1d6c0}' +
    '\\u{1d6c2}-\\u{1d6da}\\u{1d6dc}-\\u{1d6fa}\\u{1d6fc}-\\u{1d714}\\u{1d716}-\\u{1d734}' +
    '\\u{1d736}-\\u{1d74e}\\u{1d750}-\\u{1d76e}\\u{1d770}-\\u{1d788}\\u{1d78a}-\\u{1d7a8}' +
    '\\u{1d7aa}-\\u{1d7c2}\\u{1d7c4}-\\u{1d7cb}\\u{1d7ce}-\\u{1d7ff}\\u{1df00}-\\u{1df1e}' +
    '\\u{1df25}-\\u{1df2a}\\u{1e030}-\\u{1e06d}\\u{1e100}-\\u{1e12c}\\u{1e137}-\\u{1e13d}' +
    '\\u{1e140}-\\u{1e149}\\u{1e14e}\\u{1e290}-\\u{1e2ad}\\u{1e2c0}-\\u{1e2eb}' +
    '\\u{1e2f0}-\\u{1e2f9}\\u{1e4d0}-\\u{1e4eb}\\u{1e4f0}-\\u{1e4f9}\\u{1e5d0}-\\u{1e5ed}' +
    '\\u{1e5f0}-\\u{1e5fa}\\u{1e6c0}-\\u{1e6de}\\u{1e6e0}-\\u{1e6e2}\\u{1e6e4}-\\u{1e6e5}' +
    '\\u{1e6e7}-\\u{1e6ed}\\u{1e6f0}-\\u{1e6f4}\\u{1e6fe}-\\u{1e6ff}\\u{1e7e0}-\\u{1e7e6}' +
    '\\u{1e7e8}-\\u{1e7eb}\\u{1e7ed}-\\u{1e7ee}\\u{1e7f0}-\\u{1e7fe}\\u{1e800}-\\u{1e8c4}' +
    '\\u{1e8c7}-\\u{1e8cf}\\u{1e900}-\\u{1e943}\\u{1e94b}\\u{1e950}-\\u{1e959}' +
    '\\u{1ec71}-\\u{1ecab}\\u{1ecad}-\\u{1ecaf}\\u{1ecb1}-\\u{1ecb4}\\u{1ed01}-\\u{1ed2d}' +
    '\\u{1ed2f}-\\u{1ed3d}\\u{1ee00}-\\u{1ee03}\\u{1ee05}-\\u{1ee1f}\\u{1ee21}-\\u{1ee22}' +
    '\\u{1ee24}\\u{1ee27}\\u{1ee29}-\\u{1ee32}\\u{1ee34}-\\u{1ee37}\\u{1ee39}\\u{1ee3b}' +
    '\\u{1ee42}\\u{1ee47}\\u{1ee49}\\u{1ee4b}\\u{1ee4d}-\\u{1ee4f}\\u{1ee51}-\\u{1ee52}' +
    '\\u{1ee54}\\u{1ee57}\\u{1ee59}\\u{1ee5b}\\u{1ee5d}\\u{1ee5f}\\u{1ee61}-\\u{1ee62}' +
    '\\u{1ee64}\\u{1ee67}-\\u{1ee6a}\\u{1ee6c}-\\u{1ee72}\\u{1ee74}-\\u{1ee77}' +
    '\\u{1ee79}-\\u{1ee7c}\\u{1ee7e}\\u{1ee80}-\\u{1ee89}\\u{1ee8b}-\\u{1ee9b}' +
    '\\u{1eea1}-\\u{1eea3}\\u{1eea5}-\\u{1eea9}\\u{1eeab}-\\u{1eebb}\\u{1f100}-\\u{1f10c}' +
    '\\u{1fbf0}-\\u{1fbf9}\\u{20000}-\\u{2a6df}\\u{2a700}-\\u{2b81d}\\u{2b820}-\\u{2cead}' +
    '\\u{2ceb0}-\\u{2ebe0}\\u{2ebf0}-\\u{2ee5d}\\u{2f800}-\\u{2fa1d}\\u{30000}-\\u{3134a}' +
    '\\u{31350}-\\u{33479}';
  var NAME_CHARS = LETTERS_DIGITS + '._\\-';
  // NAME_CHARS_BMP is the same class without the astral ranges, usable without the `u`
  // flag (the parser's one-regexp path, 10_parse.js FAST_RE): it matches the name
  // characters of the Basic Multilingual Plane, one UTF-16 code unit each, and no
  // surrogate, so a name with an astral letter fails that regexp and takes the general path.
  var NAME_CHARS_BMP = LETTERS_DIGITS.slice(0, LETTERS_DIGITS.indexOf('\\u{')) + '._\\-';
  var NAME = '[' + NAME_CHARS + ']+';

  // Status table of NOTATION.md §9: box code → English key, German key, progress rank.
  var STATUS_BY_CODE = {
    '?': { code: '?', key: 'idea', name: 'idee', rank: 0 },
    ' ': { code: ' ', key: 'planned', name: 'geplant', rank: 1 },
    '!': { code: '!', key: 'highrisk', name: 'highrisk', rank: 1 },
    '~': { code: '~', key: 'progress', name: 'arbeit', rank: 2 },
    '/': { code: '/', key: 'skeleton', name: 'durchstich', rank: 3 },
    x: { code: 'x', key: 'done', name: 'fertig', rank: 4 },
    '^': { code: '^', key: 'prod', name: 'prod', rank: 5 },
    '-': { code: '-', key: 'discarded', name: 'verworfen', rank: 0 }
  };
  // Box characters read as another status's (§3: `[X]` is `x`).
  var BOX_ALIASES = { X: 'x' };
  // Gate characters of a node line (§3 group 2, §8) and what each makes of its node.
  var GATES = [
    { code: '-', type: 'and', optional: false },
    { code: '+', type: 'and', optional: true },
    { code: '|', type: 'or', optional: false },
    { code: '=', type: 'xor', optional: false }
  ];
  var GATE_BY_CODE = Object.create(null);
  for (var g = 0; g < GATES.length; g++) GATE_BY_CODE[GATES[g].code] = GATES[g];
  // Canonical status key per progress rank (§19).
  var RANK_KEYS = ['idea', 'planned', 'progress', 'skeleton', 'done', 'prod'];
  var SIZES = ['XS', 'S', 'M', 'L', 'XL', 'XXL'];
  var SIZE_RANK = { XS: 0, S: 1, M: 2, L: 3, XL: 4, XXL: 5 };

  // statusOf resolves an English key, a German key or a box character to the status entry.
  function statusOf(s) {
    if (s === null || s === undefined) return null;
    if (s.length === 1) return STATUS_BY_CODE[BOX_ALIASES[s] || s] || null;
    for (var c in STATUS_BY_CODE) {
      var e = STATUS_BY_CODE[c];
      if (e.key === s || e.name === s) return e;
    }
    return null;
  }

  var CR_RE = /\r\n?/g;
  var BOM = '\ufeff';
  // normalize drops one leading byte-order mark (§1: the editor reads files through the
  // browser's UTF-8 decoding, which removes it) and turns CRLF and lone CR into LF (§25).
  // Only a BOM at the very start goes; one anywhere else is text. Line numbers do not change.
  function normalize(text) {
    if (text.charCodeAt(0) === 0xfeff) text = text.slice(1);
    return text.indexOf('\r') < 0 ? text : text.replace(CR_RE, '\n');
  }
  // lines splits normalised text into physical lines; '' is one empty line.
  function lines(text) {
    return normalize(text).split('\n');
  }

  // Memo remembers the results of the last few texts, keyed by the text itself (compared
  // with ===, which costs a length check and at most one memcmp per entry). A write runs
  // apply (parse of the old text, parse of the new one to verify it), guard (analysis of
  // both) and usually an inspect of the new text: with the memo each text is parsed and
  // analysed once. Values are shared, so everything a memo hands out is read-only (the
  // parser's documents already are).
  //
  // The bound is a count and a size, but never a size that switches the memo off: the
  // two texts used last — a write's old and new text — are always kept, whatever their size
  // (a text over a fixed limit used to be parsed again by every call of a write, 20 times
  // slower per node above 262,144 characters); others go once all together hold
  // more than MEMO_MAX_CHARS. An analysed text holds about 50 bytes of heap per character
  // (a 10,000-node plan of 470,000 characters about 25 MB, in goja), so 1 Mi characters
  // keep a dozen small plans but only a write's two texts of a large one: 4 Mi kept eight
  // 10,000-node texts per runtime (200 MB), past the daemon's soft memory limit, where the
  // collector runs without pause. The host trims the memo to the plans' current texts
  // once a runtime sits unused (_trimMemo), and empties it once the whole daemon is idle
  // (engine.go).
  var MEMO_MAX_CHARS = 1048576;
  var MEMO_KEEP = 2;
  // The count bound: a write touches two texts (its old and new one), and writes on four
  // plans at once interleave on the host's runtimes, each with its own memo; with 3 they
  // missed and parsed the old text again (CPU per write 5.1–5.4 ms with four plans against
  // 2.5–2.7 with one; with 12: 1.7–1.9, docs/bench-plans.md). Memory is bounded by the size
  // rule above either way.
  var memoSize = 12;
  var useClock = 0; // counts the memos' uses: each entry's stamp (from 1), the trim's order
  function Memo() {
    this.keys = [];
    this.vals = [];
    this.stamps = []; // useClock at each entry's last use
  }
  // get moves the text it finds to the front: the entries are ordered by use, newest first,
  // so the size bound and the host's trim keep what was used last (a text a write comes
  // back to, such as a status set and set back, is found, not put again).
  Memo.prototype.get = function (text) {
    var keys = this.keys;
    for (var i = 0; i < keys.length; i++) {
      if (keys[i] !== text) continue;
      var val = this.vals[i];
      if (i > 0) {
        keys.splice(i, 1);
        keys.unshift(text);
        this.vals.splice(i, 1);
        this.vals.unshift(val);
        this.stamps.splice(i, 1);
        this.stamps.unshift(0);
      }
      this.stamps[0] = ++useClock;
      return val;
    }
    return null;
  };
  // find returns the first remembered value (newest first) that pred accepts, or null.
  Memo.prototype.find = function (pred) {
    for (var i = 0; i < this.vals.length; i++) if (pred(this.vals[i])) return this.vals[i];
    return null;
  };
  Memo.prototype.put = function (text, val) {
    if (memoSize === 0) return;
    this.keys.unshift(text);
    this.vals.unshift(val);
    this.stamps.unshift(++useClock);
    var n = Math.min(this.keys.length, memoSize);
    var chars = 0;
    for (var i = 0; i < n; i++) {
      chars += this.keys[i].length;
      if (i >= MEMO_KEEP && chars > MEMO_MAX_CHARS) {
        n = i;
        break;
      }
    }
    this.keys.length = n;
    this.vals.length = n;
    this.stamps.length = n;
  };
  Memo.prototype.clear = function () {
    this.keys = [];
    this.vals = [];
    this.stamps = [];
  };
  // keepOnly forgets every text that is not in `texts`, keeping the others' order.
  Memo.prototype.keepOnly = function (texts) {
    var keys = [];
    var vals = [];
    var stamps = [];
    for (var i = 0; i < this.keys.length; i++) {
      if (texts.indexOf(this.keys[i]) < 0) continue;
      keys.push(this.keys[i]);
      vals.push(this.vals[i]);
      stamps.push(this.stamps[i]);
    }
    this.keys = keys;
    this.vals = vals;
    this.stamps = stamps;
  };
  // supersede marks text as no plan's current text any more (the old text of a write):
  // stamp 0, which no use gives, until a use finds it again.
  Memo.prototype.supersede = function (text) {
    var i = this.keys.indexOf(text);
    if (i >= 0) this.stamps[i] = 0;
  };
  // The trim keeps at most TRIM_KEEP texts: the current text of each plan worked on last
  // (two agents on two plans, each pausing between writes), within MEMO_MAX_CHARS.
  var TRIM_KEEP = 4;
  var memos = [];
  var clearHooks = []; // other things a runtime keeps between calls (the parser's shapes)
  var trimHooks = []; // what must not outlive a trim (a link to an older text's document)
  // W._memo() makes a memo; W._setMemoSize(n) bounds all of them (0 turns memoising off,
  // e.g. for benchmarks that must measure the uncached work). W._onClearMemo(fn) has fn
  // called whenever the memos are emptied, so the host's idle clear (engine.go) frees it
  // too; W._onTrimMemo(fn) also whenever they are trimmed to the current texts (_trimMemo).
  W._memo = function () {
    var m = new Memo();
    memos.push(m);
    return m;
  };
  // _memoEntries counts the texts remembered by all memos (tests of the host's trim).
  W._memoEntries = function () {
    var n = 0;
    for (var i = 0; i < memos.length; i++) n += memos[i].keys.length;
    return n;
  };
  W._onClearMemo = function (fn) {
    clearHooks.push(fn);
  };
  W._onTrimMemo = function (fn) {
    trimHooks.push(fn);
  };
  W._clearMemo = function () {
    for (var i = 0; i < memos.length; i++) memos[i].clear();
    for (i = 0; i < clearHooks.length; i++) clearHooks[i]();
    for (i = 0; i < trimHooks.length; i++) trimHooks[i]();
  };
  // _supersede(old, neu) tells the memos that a write made neu from old, so old is no
  // plan's current text any more; a later use makes it one again (a status set and set
  // back finds its text in the memo). The mark is the entry's stamp, so a superseded text
  // is held no longer than the memo holds it.
  W._supersede = function (old, neu) {
    if (old === neu) return;
    for (var i = 0; i < memos.length; i++) memos[i].supersede(old);
  };
  // _trimMemo keeps, in every memo that holds them, the texts used last that no write has
  // superseded since — the current text of each plan worked on last, which an agent's
  // next write starts from — newest first, at most TRIM_KEEP and together within
  // MEMO_MAX_CHARS (a text that does not fit is passed over). One choice for all memos: a
  // write needs its old text's document and analysis together (an analysis hit does not
  // touch the parser's memo). The old text of a write is dropped: its plan has moved on.
  W._trimMemo = function () {
    var texts = [];
    var stamps = [];
    for (var i = 0; i < memos.length; i++) {
      var m = memos[i];
      for (var j = 0; j < m.keys.length; j++) {
        var at = texts.indexOf(m.keys[j]);
        if (at < 0) {
          texts.push(m.keys[j]);
          stamps.push(m.stamps[j]);
        } else if (m.stamps[j] > stamps[at]) {
          stamps[at] = m.stamps[j];
        }
      }
    }
    var order = [];
    for (i = 0; i < texts.length; i++) order.push(i);
    order.sort(function (a, b) {
      return stamps[b] - stamps[a];
    });
    var keep = [];
    var chars = 0;
    for (i = 0; i < order.length && keep.length < TRIM_KEEP; i++) {
      var text = texts[order[i]];
      if (stamps[order[i]] === 0 || chars + text.length > MEMO_MAX_CHARS) continue;
      keep.push(text);
      chars += text.length;
    }
    for (i = 0; i < memos.length; i++) memos[i].keepOnly(keep);
    for (i = 0; i < trimHooks.length; i++) trimHooks[i]();
  };
  // _memoHolds(text) says whether a memo remembers text (tests of the host's trim).
  W._memoHolds = function (text) {
    for (var i = 0; i < memos.length; i++) if (memos[i].keys.indexOf(text) >= 0) return true;
    return false;
  };
  W._setMemoSize = function (n) {
    memoSize = n;
    W._clearMemo();
  };

  W._text = {
    NAME_CHARS: NAME_CHARS,
    NAME_CHARS_BMP: NAME_CHARS_BMP,
    NAME: NAME,
    STATUS_BY_CODE: STATUS_BY_CODE,
    BOX_ALIASES: BOX_ALIASES,
    GATES: GATES,
    GATE_BY_CODE: GATE_BY_CODE,
    RANK_KEYS: RANK_KEYS,
    SIZES: SIZES,
    SIZE_RANK: SIZE_RANK,
    statusOf: statusOf,
    BOM: BOM,
    normalize: normalize,
    lines: lines
  };
  W.normalize = W.normalize || normalize;
  W.lines = W.lines || lines;
})(Werkbaum);
