//! Paragraph-level dedup (`--paragraphs`): the paragraphs of kept documents that a document
//! kept before them holds are left out and listed, whatever the workers or the memory
//! budget, and a run without the flag writes what it wrote before.

use std::path::{Path, PathBuf};

use neardup_e2e::{dedup, summary};
use neardup_io::{Decision, read_documents};

/// Paragraphs of the documents' own, each a different text.
const OWN: [&str; 7] = [
    "The library on Mill Street reopens next week after a year of repairs to its roof, with a \
     new reading room for children and longer opening hours on Saturdays.",
    "Fishing boats stayed in the harbour for a third day as the wind kept rising; the owners say \
     the lost catch will cost them more than the repairs to the pier did last winter.",
    "Pupils at the primary school planted forty apple trees along the playing field, a gift \
     from the orchard that closed in March after supplying the town for sixty years.",
    "Stallholders at the Thursday market complained about the new parking charges, which they \
     say keep older shoppers away from the square at the busiest time of the week.",
    "Engineers found cracks in two of the old bridge's arches during an inspection, and the \
     council has closed it to lorries until a survey of the foundations is finished.",
    "A jazz quartet from the conservatory will play free concerts in the park bandstand every \
     Sunday in August, weather permitting, with picnic tables set out on the lawn.",
    "Volunteers counted more than two hundred species of moth in the nature reserve during the \
     summer survey, including three that had not been recorded in the county before.",
];

/// Chinese paragraphs of the documents' own.
const ZH_OWN: [&str; 4] = [
    "东湖镇第一届农民丰收节昨天开幕，来自周边各村的农户带来了新鲜的瓜果蔬菜和手工制品，现场还举办了农技知识讲座。",
    "西山乡中心小学的新教学楼本周投入使用，楼内设有图书室、科学实验室和多功能教室，全乡六百多名学生从此告别了旧校舍。",
    "南桥街道社区医院开设了夜间门诊，每天晚上六点到十点为附近居民提供常见病诊疗和慢性病复诊服务，方便上班族就医。",
    "北岭村的古茶园今年春茶产量比去年增加了三成，村里的合作社通过网上直播销售，把茶叶卖到了全国二十多个省份。",
];

const SYNDICATED: &str = "Heavy rain is expected across the northern valleys over the weekend, \
    and the weather service has asked drivers to avoid the mountain passes until the storms have \
    moved east on Monday morning.";
/// [`SYNDICATED`] with one word changed: another paragraph.
const EDITED: &str = "Heavy rain is expected across the northern valleys over the weekend, \
    and the weather service has asked drivers to avoid the mountain roads until the storms have \
    moved east on Monday morning.";
/// [`SYNDICATED`] as another site prints it: runs of spaces, full-width letters, a line break.
const NOISY: &str = "Heavy rain is expected  across the northern valleys over the weekend,\nand \
    the ｗｅａｔｈｅｒ service has asked drivers to avoid the mountain passes until the storms \
    have moved east on Monday morning.";
const NOTICE: &str = "This article is republished from a partner site under its syndication \
    licence. The views expressed are the author's own and do not necessarily reflect ours.";
const ZH: &str = "国家统计局今天发布数据显示，今年前三季度全国规模以上工业增加值同比增长百分之四点八，\
    其中制造业增长百分之五点一，高技术制造业增长百分之七点二，装备制造业增长百分之六点三，\
    工业生产总体保持平稳，企业效益持续改善，市场预期逐步好转。";
/// [`ZH`] with spaces and traditional characters.
const ZH_NOISY: &str = "國家統計局今天發布數據顯示， 今年前三季度全國規模以上工業增加值同比增長百分之四點八，\
    其中製造業增長百分之五點一， 高技術製造業增長百分之七點二，裝備製造業增長百分之六點三，\
    工業生產總體保持平穩，企業效益持續改善，市場預期逐步好轉。";

/// Documents in input order: (id, paragraphs). `b-copy` is a near duplicate of `b` (removed):
/// its edited first paragraph is on `g` too, which keeps it, since a removed document
/// neither counts nor loses paragraphs.
fn corpus() -> Vec<(&'static str, Vec<String>)> {
    let b_edit = OWN[1].replace("third day", "fourth day");
    let doc = |paras: &[&str]| paras.iter().map(|p| p.to_string()).collect::<Vec<_>>();
    vec![
        ("a", doc(&["Valley news", SYNDICATED, OWN[0]])),
        ("b", doc(&["Port news", OWN[1], NOISY, OWN[2], NOTICE])),
        ("b-copy", doc(&["Port news", &b_edit, NOISY, OWN[2], NOTICE])),
        ("c", doc(&[OWN[3], EDITED, NOTICE, "Short."])),
        ("d", doc(&[ZH_OWN[0], ZH, ZH_OWN[1]])),
        ("e", doc(&[ZH_OWN[2], ZH_NOISY, ZH_OWN[3]])),
        ("f", doc(&[OWN[4], NOTICE, NOTICE])),
        ("g", doc(&[OWN[5], &b_edit, OWN[6]])),
    ]
}

/// Writes `docs` (id, paragraphs) as `dir/name.jsonl`, paragraphs between blank lines.
fn write_docs<P: AsRef<str>>(dir: &Path, name: &str, docs: &[(&str, Vec<P>)]) -> PathBuf {
    let path = dir.join(format!("{name}.jsonl"));
    let lines: Vec<String> = docs
        .iter()
        .map(|(id, paras)| {
            let paras: Vec<&str> = paras.iter().map(AsRef::as_ref).collect();
            serde_json::json!({ "id": id, "text": paras.join("\n\n") }).to_string()
        })
        .collect();
    std::fs::write(&path, lines.join("\n") + "\n").unwrap();
    path
}

fn write(dir: &Path) -> PathBuf {
    write_docs(dir, "docs", &corpus())
}

/// The `paragraphs/` rows: (id, paragraph, first_id, offset, length), sorted.
fn left_out(out: &Path) -> Vec<(String, i32, String, i64, i64)> {
    let mut rows = Vec::new();
    for entry in std::fs::read_dir(out.join("paragraphs")).unwrap() {
        let file = std::fs::File::open(entry.unwrap().path()).unwrap();
        let reader = parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder::try_new(file)
            .unwrap()
            .build()
            .unwrap();
        for batch in reader {
            use arrow_array::cast::AsArray;
            use arrow_array::types::{Int32Type, Int64Type};
            let b = batch.unwrap();
            let col = |n: &str| b.column_by_name(n).unwrap().clone();
            let (id, number, first) = (col("id"), col("paragraph"), col("first_id"));
            let (offset, length) = (col("offset"), col("length"));
            for i in 0..b.num_rows() {
                rows.push((
                    id.as_string::<i32>().value(i).to_string(),
                    number.as_primitive::<Int32Type>().value(i),
                    first.as_string::<i32>().value(i).to_string(),
                    offset.as_primitive::<Int64Type>().value(i),
                    length.as_primitive::<Int64Type>().value(i),
                ));
            }
        }
    }
    rows.sort();
    rows
}

#[test]
fn repeated_paragraphs_of_kept_documents_are_left_out_and_listed() {
    let dir = tempfile::tempdir().unwrap();
    let input = write(dir.path());
    let out = dir.path().join("out");
    dedup(&input, &out, &["--paragraphs"]).unwrap();
    let docs = read_documents(&out.join("documents")).unwrap();
    let decision = |id: &str| docs.iter().find(|d| d.id.as_deref() == Some(id)).unwrap();
    assert_eq!(decision("b-copy").decision, Decision::Remove);
    assert!(
        docs.iter()
            .filter(|d| d.id.as_deref() != Some("b-copy"))
            .all(|d| d.decision == Decision::Keep)
    );
    let rows = left_out(&out);
    let found: Vec<(&str, i32, &str)> =
        rows.iter().map(|(id, n, first, _, _)| (id.as_str(), *n, first.as_str())).collect();
    // The noisy copy of the syndicated paragraph, the notice's later copies (twice on
    // `f`, once its first occurrence on `b`), and the Chinese paragraph in another script
    // and spacing; never the edited paragraph (another text), the short line, nor the
    // paragraph only a removed document had before `g`.
    assert_eq!(found, [("b", 2, "a"), ("c", 2, "b"), ("e", 1, "d"), ("f", 1, "b"), ("f", 2, "b")]);
    // Offsets and lengths are the paragraph's bytes in the record's text.
    let text = corpus()[1].1.join("\n\n");
    let (_, _, _, offset, length) = &rows[0];
    assert_eq!(&text[*offset as usize..(*offset + *length) as usize], NOISY);
    let counts = |id: &str| decision(id).repeated.map(|r| r.paragraphs);
    assert_eq!(
        (counts("b"), counts("f"), counts("g"), counts("b-copy")),
        (Some(1), Some(2), Some(0), None)
    );
    // `eval --paragraph-truth` scores them against labels: one wrong label and one missing.
    let truth = dir.path().join("truth.jsonl");
    let labels: Vec<String> = corpus()
        .iter()
        .map(|(id, _)| {
            let repeated: &[u32] = match *id {
                "b" => &[2],
                "c" => &[1],
                "e" => &[1],
                "f" => &[1],
                _ => &[],
            };
            let lang = if ["d", "e"].contains(id) { "zh" } else { "en" };
            serde_json::json!({ "id": id, "truth": id, "lang": lang, "repeated": repeated })
                .to_string()
        })
        .collect();
    std::fs::write(&truth, labels.join("\n") + "\n").unwrap();
    let (truth, run) = (truth.to_str().unwrap(), out.to_str().unwrap());
    let args = ["eval", "--truth", truth, "--paragraph-truth", truth, "--by", "lang", "--run", run];
    let Ok(neardup_cli::Outcome::Evaluated(report)) = neardup_e2e::neardup(&args) else {
        panic!("eval failed")
    };
    let scores: Vec<_> = report
        .paragraphs
        .iter()
        .map(|s| (s.group.as_str(), s.labelled, s.left_out, s.correct))
        .collect();
    assert_eq!(scores, [("all", 4, 5, 3), ("en", 3, 4, 2), ("zh", 1, 1, 1)]);
    let s = summary(&out);
    assert_eq!(s["paragraphs"]["paragraphs_left_out"], 5);
    // `explain` lists a document's paragraphs left out, with the document that keeps each.
    let args = ["explain", "--run", out.to_str().unwrap(), "f", "a"];
    let Ok(neardup_cli::Outcome::Explained(e)) = neardup_e2e::neardup(&args) else {
        panic!("explain failed")
    };
    let listed: Vec<_> =
        e.repeated_paragraphs[0].iter().map(|p| (p.paragraph, p.first_id.as_str())).collect();
    assert_eq!(listed, [(1, "b"), (2, "b")]);
    assert!(NOTICE.starts_with(&e.repeated_paragraphs[0][0].excerpt));
    assert!(e.repeated_paragraphs[1].is_empty());
    let report = std::fs::read_to_string(out.join("report.html")).unwrap();
    assert!(report.contains("<p>Paragraphs: 5 paragraphs ("), "the report counts them");
    assert_eq!(s["paragraphs"]["documents"], 4);
    // Workers and the memory budget change nothing.
    for (name, args) in
        [("w1", &["-w", "1"][..]), ("w3", &["-w", "3"]), ("budget", &["--memory-budget", "300M"])]
    {
        let other = dir.path().join(name);
        let mut all = vec!["--paragraphs"];
        all.extend_from_slice(args);
        dedup(&input, &other, &all).unwrap();
        assert_eq!(left_out(&other), rows, "{name}");
        let repeated = |docs: Vec<neardup_io::DocumentRow>| {
            let mut rows: Vec<_> =
                docs.into_iter().map(|d| (d.id, d.decision, d.repeated)).collect();
            rows.sort_by(|a, b| a.0.cmp(&b.0));
            rows
        };
        assert_eq!(
            repeated(read_documents(&other.join("documents")).unwrap()),
            repeated(docs.clone()),
            "{name}"
        );
    }
}

#[test]
fn without_the_flag_nothing_is_left_out_and_documents_keep_their_columns() {
    let dir = tempfile::tempdir().unwrap();
    let input = write(dir.path());
    let out = dir.path().join("out");
    dedup(&input, &out, &[]).unwrap();
    assert!(!out.join("paragraphs").exists());
    let part = std::fs::read_dir(out.join("documents")).unwrap().next().unwrap().unwrap().path();
    let file = std::fs::File::open(part).unwrap();
    let builder =
        parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder::try_new(file).unwrap();
    assert_eq!(builder.schema().fields().len(), neardup_io::documents_schema().fields().len());
    assert!(summary(&out).get("paragraphs").is_none());
    // A run without it adds no paragraphs to an index: a later run with it cannot leave
    // out that run's paragraphs (it says so), only those its own batch repeats.
    let index = dir.path().join("index");
    let index = index.to_str().unwrap();
    dedup(&input, &dir.path().join("w1"), &["--index", index]).unwrap();
    let manifest: serde_json::Value =
        serde_json::from_slice(&std::fs::read(dir.path().join("index/index.json")).unwrap())
            .unwrap();
    assert!(manifest["generations"][0].get("paragraphs").is_none());
    let later = write_docs(dir.path(), "later", &[("h", vec![LATER[0], NOTICE, LATER[1], NOTICE])]);
    let w2 = dir.path().join("w2");
    dedup(&later, &w2, &["--paragraphs", "--index", index]).unwrap();
    assert_eq!(left_out_with_runs(&w2), [("h".into(), 3, "h".into(), None)]);
}

/// `--write-kept` writes each kept JSON Lines record with its repeated paragraphs left out
/// of its text field (with the blank lines after them) and every other field as it was.
#[test]
fn the_kept_dataset_leaves_the_repeated_paragraphs_out_of_the_text() {
    let dir = tempfile::tempdir().unwrap();
    let input = write(dir.path());
    let (out, kept) = (dir.path().join("out"), dir.path().join("kept"));
    let kept_arg = kept.to_str().unwrap();
    dedup(&input, &out, &["--paragraphs", "--write-kept", kept_arg]).unwrap();
    let copy = std::fs::read_to_string(kept.join("00000-docs.jsonl")).unwrap();
    let records: Vec<serde_json::Value> =
        copy.lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    let text = |id: &str| {
        let record = records.iter().find(|r| r["id"] == id).unwrap();
        record["text"].as_str().unwrap().to_string()
    };
    assert!(records.iter().all(|r| r["id"] != "b-copy"), "removed documents stay out");
    let paragraphs = |id: &str| corpus().into_iter().find(|(d, _)| *d == id).unwrap().1;
    let b = paragraphs("b");
    assert_eq!(text("b"), [&b[..2], &b[3..]].concat().join("\n\n"));
    let f = paragraphs("f");
    assert_eq!(text("f"), f[0], "the last paragraphs go with the blank lines before them");
    assert_eq!(text("a"), paragraphs("a").join("\n\n"), "nothing left out: as it was");
    // A record with nothing left out is the input's line, byte for byte.
    let line_of = |text: &str, id: &str| {
        text.lines().find(|l| l.contains(&format!("\"id\":\"{id}\""))).unwrap().to_string()
    };
    let original = std::fs::read_to_string(&input).unwrap();
    assert_eq!(line_of(&copy, "a"), line_of(&original, "a"));
}

/// A kept Parquet row is written with its repeated paragraphs left out of its text column,
/// every other column as it was.
#[test]
fn kept_parquet_rows_leave_the_repeated_paragraphs_out_of_the_text_column() {
    use std::sync::Arc;

    use arrow_array::cast::AsArray;
    use arrow_array::{RecordBatch, StringArray};
    use arrow_schema::{DataType, Field, Schema};
    let dir = tempfile::tempdir().unwrap();
    let docs = corpus();
    let input = dir.path().join("docs.parquet");
    let schema = Arc::new(Schema::new(vec![
        Field::new("id", DataType::Utf8, false),
        Field::new("text", DataType::Utf8, false),
        Field::new("section", DataType::Utf8, false),
    ]));
    let ids: Vec<&str> = docs.iter().map(|(id, _)| *id).collect();
    let texts: Vec<String> = docs.iter().map(|(_, p)| p.join("\n\n")).collect();
    let sections: Vec<String> = ids.iter().map(|id| format!("section {id}")).collect();
    let batch = RecordBatch::try_new(
        schema.clone(),
        vec![
            Arc::new(StringArray::from(ids.clone())),
            Arc::new(StringArray::from(texts)),
            Arc::new(StringArray::from(sections)),
        ],
    )
    .unwrap();
    let mut w =
        parquet::arrow::ArrowWriter::try_new(std::fs::File::create(&input).unwrap(), schema, None)
            .unwrap();
    w.write(&batch).unwrap();
    w.close().unwrap();
    let (out, kept) = (dir.path().join("out"), dir.path().join("kept"));
    dedup(&input, &out, &["--paragraphs", "--write-kept", kept.to_str().unwrap()]).unwrap();
    assert_eq!(left_out(&out).len(), 5);
    let file = std::fs::File::open(kept.join("00000-docs.parquet")).unwrap();
    let reader = parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder::try_new(file)
        .unwrap()
        .build()
        .unwrap();
    let mut rows = Vec::new();
    for batch in reader {
        let b = batch.unwrap();
        let col = |n: &str| b.column_by_name(n).unwrap().as_string::<i32>().clone();
        let (id, text, section) = (col("id"), col("text"), col("section"));
        for i in 0..b.num_rows() {
            rows.push((
                id.value(i).to_string(),
                text.value(i).to_string(),
                section.value(i).to_string(),
            ));
        }
    }
    let row = |id: &str| rows.iter().find(|r| r.0 == id).unwrap().clone();
    let f = &docs.iter().find(|(id, _)| *id == "f").unwrap().1;
    assert_eq!(row("f"), ("f".to_string(), f[0].clone(), "section f".to_string()));
    let a = &docs.iter().find(|(id, _)| *id == "a").unwrap().1;
    assert_eq!(row("a").1, a.join("\n\n"));
    assert!(rows.iter().all(|r| r.0 != "b-copy"));
}

/// In a run with web pages, a kept record that is not one is still written with its
/// repeated paragraphs cut out, and a kept web page as it is (its paragraphs are lines of
/// its main text, not ranges of a field).
#[test]
fn in_a_run_with_web_pages_only_other_records_are_cut() {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("in");
    std::fs::create_dir(&input).unwrap();
    std::fs::rename(write(dir.path()), input.join("a-docs.jsonl")).unwrap();
    let page = serde_json::json!({
        "id": "page",
        "url": "https://news.example/a/1.html",
        "text": format!("{}\n{}", OWN[6].replace("moth", "beetle"), NOTICE),
    });
    std::fs::write(input.join("b-web.jsonl"), format!("{page}\n")).unwrap();
    let (out, kept) = (dir.path().join("out"), dir.path().join("kept"));
    dedup(&input, &out, &["--paragraphs", "--write-kept", kept.to_str().unwrap()]).unwrap();
    let rows = left_out(&out);
    assert!(rows.iter().any(|r| r.0 == "page" && r.2 == "b"), "{rows:?}");
    let web = std::fs::read_to_string(kept.join("00001-b-web.jsonl")).unwrap();
    assert_eq!(web, std::fs::read_to_string(input.join("b-web.jsonl")).unwrap());
    let docs = std::fs::read_to_string(kept.join("00000-a-docs.jsonl")).unwrap();
    let f: serde_json::Value =
        serde_json::from_str(docs.lines().find(|l| l.contains("\"id\":\"f\"")).unwrap()).unwrap();
    assert_eq!(f["text"], OWN[4]);
}

/// Writes the documents `ids` of [`corpus`] as `name.jsonl`.
fn write_batch(dir: &Path, name: &str, ids: &[&str]) -> PathBuf {
    let docs: Vec<_> = corpus().into_iter().filter(|(id, _)| ids.contains(id)).collect();
    write_docs(dir, name, &docs)
}

/// The `paragraphs/` rows as (id, paragraph, first_id, first_run), sorted.
fn left_out_with_runs(out: &Path) -> Vec<(String, u32, String, Option<String>)> {
    let mut rows: Vec<_> = neardup_io::read_paragraphs(&out.join("paragraphs"))
        .unwrap()
        .into_iter()
        .map(|r| (r.id, r.paragraph, r.first_id, r.first_run))
        .collect();
    rows.sort();
    rows
}

#[test]
fn a_second_batch_leaves_out_the_paragraphs_the_first_holds() {
    let dir = tempfile::tempdir().unwrap();
    let first: &[&str] = &["a", "b", "b-copy", "c"];
    let second: &[&str] = &["d", "e", "f", "g"];
    let (week1, week2) =
        (write_batch(dir.path(), "w1", first), write_batch(dir.path(), "w2", second));
    let index = dir.path().join("index");
    let index = index.to_str().unwrap();
    let batch = |input: &Path, out: &str, run: &str, extra: &[&str]| {
        let out = dir.path().join(out);
        let mut args = vec!["--paragraphs", "--index", index, "--run-name", run];
        args.extend_from_slice(extra);
        dedup(input, &out, &args).unwrap();
        out
    };
    let out1 = batch(&week1, "out-1", "week-1", &[]);
    let out2 = batch(&week2, "out-2", "week-2", &[]);
    let owned = |run: &str| Some(run.to_string());
    assert_eq!(
        left_out_with_runs(&out1),
        [("b".into(), 2, "a".into(), None), ("c".into(), 2, "b".into(), None)]
    );
    // The notice `b` holds is left out of `f` twice, naming the first run; the Chinese
    // paragraph is held in this batch; `g`'s paragraph of the removed `b-copy` stays.
    let second_rows = vec![
        ("e".to_string(), 1, "d".to_string(), None),
        ("f".into(), 1, "b".into(), owned("week-1")),
        ("f".into(), 2, "b".into(), owned("week-1")),
    ];
    assert_eq!(left_out_with_runs(&out2), second_rows);
    // The two batches leave out what one run over both does.
    let all = dir.path().join("all");
    dedup(&write(dir.path()), &all, &["--paragraphs"]).unwrap();
    let strip = |rows: Vec<(String, u32, String, Option<String>)>| {
        rows.into_iter().map(|(id, n, first, _)| (id, n, first)).collect::<Vec<_>>()
    };
    let mut batches = strip(left_out_with_runs(&out1));
    batches.extend(strip(left_out_with_runs(&out2)));
    batches.sort();
    assert_eq!(batches, strip(left_out_with_runs(&all)));
    let s = summary(&out1);
    // `a`'s two paragraphs, `b`'s three but the noisy copy, `c`'s two but the notice.
    assert_eq!(s["index"]["paragraphs_written"], 7, "{}", s["index"]);

    // Rerunning the second batch (its generation replaced) gives the same, whatever the
    // workers and budget.
    for extra in [&["-w", "3"][..], &["--memory-budget", "300M"]] {
        assert_eq!(left_out_with_runs(&batch(&week2, "out-2", "week-2", extra)), second_rows);
    }
    // After compaction, a third batch leaves out what either earlier batch holds.
    neardup_e2e::neardup(&["index", "compact", "--index", index]).unwrap();
    let later =
        |name: &str, paras: &[&str]| write_docs(dir.path(), name, &[(name, paras.to_vec())]);
    let week3 = later("h", &["Harbour notes", NOTICE, ZH, LATER[0]]);
    let rows = left_out_with_runs(&batch(&week3, "out-3", "week-3", &[]));
    assert_eq!(
        rows,
        [
            ("h".into(), 1, "b".into(), owned("week-1")),
            ("h".into(), 2, "d".into(), owned("week-2"))
        ]
    );
    // Once `b` is forgotten, nothing holds its notice (its later copies were left out), so
    // the next document that has it keeps it.
    let ids = dir.path().join("forget.txt");
    std::fs::write(&ids, "b\n").unwrap();
    let forget = ["index", "forget", "--index", index, "--ids", ids.to_str().unwrap()];
    neardup_e2e::neardup(&forget).unwrap();
    let week4 = later("i", &["Late news", LATER[1], NOTICE]);
    assert!(left_out_with_runs(&batch(&week4, "out-4", "week-4", &[])).is_empty());
}

/// Paragraphs of later batches' own.
const LATER: [&str; 2] = [
    "The ferry timetable changes on the first of the month, with an extra crossing in the \
     evening and a later last boat on Fridays for passengers coming back from the city.",
    "Residents of the old mill cottages have formed a group to restore the footpath along the \
     river, and the landowner has agreed to let them clear the brambles this autumn.",
];

#[test]
fn a_mostly_repeated_document_is_removed_unless_it_holds_what_a_later_one_left_out() {
    let dir = tempfile::tempdir().unwrap();
    let docs = [
        ("s1", vec![OWN[0], OWN[1]]),
        // Two of its three paragraphs are `s1`'s, but `s3` leaves out its third: it stays.
        ("s2", vec![OWN[0], OWN[1], LATER[0]]),
        // Two of three are `s1`'s and `s2`'s, and no one leaves out its own: removed.
        ("s3", vec![OWN[2], LATER[0], OWN[1]]),
    ];
    let path = write_docs(dir.path(), "docs", &docs);
    let index = dir.path().join("index");
    let index = index.to_str().unwrap();
    let share = "paragraphs.max_repeated_share=0.6";
    let out = dir.path().join("out");
    dedup(&path, &out, &["--paragraphs", "--set", share, "--index", index]).unwrap();
    let rows = read_documents(&out.join("documents")).unwrap();
    let row = |id: &str| rows.iter().find(|d| d.id.as_deref() == Some(id)).unwrap();
    assert_eq!(row("s1").decision, Decision::Keep);
    assert_eq!((row("s2").decision, row("s2").reason), (Decision::Keep, None));
    let s3 = row("s3");
    assert_eq!(
        (s3.decision, s3.reason),
        (Decision::Remove, Some(neardup_io::Reason::MostlyRepeated))
    );
    assert!(
        s3.detail.as_deref().unwrap().contains("2 paragraph(s) other documents hold"),
        "{s3:?}"
    );
    assert_eq!(s3.repeated.unwrap().paragraphs, 2);
    // The removed document holds nothing in the index: a later batch keeps its paragraph.
    let later = write_docs(dir.path(), "later", &[("s4", vec![LATER[1], OWN[2]])]);
    let out2 = dir.path().join("out2");
    dedup(&later, &out2, &["--paragraphs", "--set", share, "--index", index]).unwrap();
    assert!(left_out_with_runs(&out2).is_empty());
    // At the default share both are kept.
    let out3 = dir.path().join("out3");
    dedup(&path, &out3, &["--paragraphs"]).unwrap();
    let rows = read_documents(&out3.join("documents")).unwrap();
    assert!(rows.iter().all(|d| d.decision == Decision::Keep), "{rows:?}");
}

#[test]
fn the_summary_and_the_report_list_the_most_repeated_paragraphs() {
    let dir = tempfile::tempdir().unwrap();
    let input = write(dir.path());
    let out = dir.path().join("out");
    dedup(&input, &out, &["--paragraphs"]).unwrap();
    let s = summary(&out);
    let most = s["paragraphs"]["most_repeated"].as_array().unwrap();
    let listed: Vec<(u64, &str, &str)> = most
        .iter()
        .map(|p| {
            let (n, first) = (p["left_out"].as_u64().unwrap(), p["first_id"].as_str().unwrap());
            (n, first, p["quote_id"].as_str().unwrap())
        })
        .collect();
    // The notice three times (kept by `b`), then the syndicated paragraph and the Chinese
    // one once each, in key order.
    assert_eq!(listed[0], (3, "b", "b"));
    assert_eq!(listed.len(), 3);
    assert!(listed[1..].iter().all(|l| l.0 == 1));
    let report = std::fs::read_to_string(out.join("report.html")).unwrap();
    let section = &report[report.find("<h2>Most repeated paragraphs</h2>").unwrap()..];
    assert!(section.contains("<code>kept by b ("), "{section}");
    assert!(
        section.contains(&NOTICE[..60].replace('\'', "&#39;")),
        "the notice is quoted: {section}"
    );
    // Workers change nothing.
    let other = dir.path().join("w3");
    dedup(&input, &other, &["--paragraphs", "-w", "3"]).unwrap();
    assert_eq!(summary(&other)["paragraphs"], s["paragraphs"]);
}

/// The share is of the characters as paragraphs are compared, so a Chinese document made of
/// paragraphs others hold is removed as an English one is (its punctuation, which
/// paragraphs drop, once kept it below the share); and a cluster's kept document stays
/// whatever its share, as its members were removed as copies of it.
#[test]
fn the_share_rule_counts_alike_in_both_scripts_and_spares_a_clusters_kept_document() {
    let dir = tempfile::tempdir().unwrap();
    // Two of the short Chinese passages make one paragraph of 100 characters or more.
    let (a, b) = ([ZH_OWN[0], ZH_OWN[3]].concat(), [ZH_OWN[1], ZH_OWN[2]].concat());
    let docs = [
        ("z1", vec![a.as_str(), ZH]),
        ("z2", vec![b.as_str()]),
        ("z3", vec![ZH, b.as_str()]),
        ("c1", vec![OWN[3], OWN[4]]),
        ("c2", vec![OWN[5], OWN[6]]),
        ("b", vec![OWN[3], OWN[5], "Notes."]),
        ("b-copy", vec![OWN[3], OWN[5], "Notes!"]),
    ];
    let path = write_docs(dir.path(), "docs", &docs);
    let out = dir.path().join("out");
    dedup(&path, &out, &["--paragraphs"]).unwrap();
    let rows = read_documents(&out.join("documents")).unwrap();
    let row = |id: &str| {
        let r = rows.iter().find(|d| d.id.as_deref() == Some(id)).unwrap();
        (r.decision, r.reason)
    };
    assert_eq!(row("z3"), (Decision::Remove, Some(neardup_io::Reason::MostlyRepeated)));
    assert_eq!(row("b-copy"), (Decision::Remove, Some(neardup_io::Reason::NearDuplicate)));
    assert_eq!(row("b").0, Decision::Keep, "the kept document of a cluster stays");
    for id in ["z1", "z2", "c1", "c2"] {
        assert_eq!(row(id).0, Decision::Keep, "{id}");
    }
}

/// The bundled samples' paragraphs (web pages, poems, court openings) under a budget at
/// which the run spills (the paragraph stages collect their keys in the spilling runs every
/// grouping stage uses): the same paragraphs are left out and the same documents written as
/// in memory. (The record limit is set alike, since its default follows the budget.)
#[test]
fn paragraphs_spilled_under_a_tiny_budget_are_those_left_out_in_memory() {
    let dir = tempfile::tempdir().unwrap();
    let input = neardup_e2e::repo().join("data-samples");
    let run = |name: &str, budget: &str| {
        let out = dir.path().join(name);
        let args = ["--paragraphs", "-w", "2", "--set", "input.max_record_bytes=1048576"];
        let mut all = args.to_vec();
        all.extend(["--memory-budget", budget]);
        dedup(&input, &out, &all).unwrap();
        out
    };
    let (small, large) = (run("small", "2M"), run("large", "8G"));
    let (s, l) = (summary(&small), summary(&large));
    assert!(s["spilled_bytes"].as_u64().unwrap() > 0, "a 2M budget spills: {s}");
    assert_eq!(l["spilled_bytes"], 0);
    assert!(s["paragraphs"]["paragraphs_left_out"].as_u64().unwrap() > 100, "{s}");
    assert_eq!(s["paragraphs"], l["paragraphs"]);
    assert_eq!(s["counts"], l["counts"]);
    assert_eq!(left_out(&small), left_out(&large));
    let render = neardup_e2e::render_documents;
    assert_eq!(render(&small), render(&large));
}
