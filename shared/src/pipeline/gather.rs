//! Gathering rows from many decoded batches into one, in a given order (the writer's sorted
//! order): one copy of each value, whatever the nesting.
//!
//! `arrow_select::interleave` has fast paths for primitives, strings, structs and lists, but
//! falls back to a row-at-a-time `MutableArrayData` copy for maps and fixed-size binaries (a
//! UUID), and its struct and list paths call back into that fallback for any map or fixed-size
//! binary nested inside them. On the event workload those two fallbacks were a fifth of the
//! writer's CPU. This module recurses through structs, lists and maps itself and copies
//! fixed-size values directly, handing every other leaf to `arrow_select::interleave`.
//!
//! Strings and binaries are copied here too, with the memory of rows a little ahead prefetched:
//! in sorted order consecutive rows come from different decoded files, so each value's offsets
//! and bytes are a cache miss, and the copy of strings was the largest single cost of the
//! gather (15% of the embedded ingest).

use std::sync::Arc;

use arrow_array::types::{BinaryType, ByteArrayType, LargeBinaryType, LargeUtf8Type, Utf8Type};
use arrow_array::{
    Array, ArrayRef, FixedSizeBinaryArray, GenericByteArray, GenericListArray, MapArray, OffsetSizeTrait, RecordBatch,
    RecordBatchOptions, StructArray, make_array,
};
use arrow_buffer::{ArrowNativeType, BooleanBuffer, Buffer, NullBuffer, OffsetBuffer};
use arrow_schema::DataType;

use crate::Result;

/// The rows `indices` ((batch, row) pairs) of `batches`, in that order, as one batch.
pub(crate) fn gather_rows(batches: &[RecordBatch], indices: &[(usize, usize)]) -> Result<RecordBatch> {
    let Some(first) = batches.first() else {
        return Err(crate::Error::internal("gather from no batches"));
    };
    let columns = (0..first.num_columns())
        .map(|c| {
            let values: Vec<&dyn Array> = batches.iter().map(|b| b.column(c).as_ref()).collect();
            interleave(&values, indices)
        })
        .collect::<Result<Vec<_>>>()?;
    let opts = RecordBatchOptions::new().with_row_count(Some(indices.len()));
    Ok(RecordBatch::try_new_with_options(first.schema(), columns, &opts)?)
}

/// One column's values at `indices`, taken from `values` (all of one data type).
pub(crate) fn interleave(values: &[&dyn Array], indices: &[(usize, usize)]) -> Result<ArrayRef> {
    let Some(first) = values.first() else {
        return Err(crate::Error::internal("interleave of no arrays"));
    };
    Ok(match first.data_type() {
        DataType::Struct(_) => interleave_struct(values, indices)?,
        DataType::List(_) => interleave_list::<i32>(values, indices)?,
        DataType::LargeList(_) => interleave_list::<i64>(values, indices)?,
        DataType::Map(_, _) => interleave_map(values, indices)?,
        DataType::FixedSizeBinary(_) => interleave_fixed(values, indices)?,
        DataType::Utf8 => interleave_bytes::<Utf8Type>(values, indices)?,
        DataType::LargeUtf8 => interleave_bytes::<LargeUtf8Type>(values, indices)?,
        DataType::Binary => interleave_bytes::<BinaryType>(values, indices)?,
        DataType::LargeBinary => interleave_bytes::<LargeBinaryType>(values, indices)?,
        _ => arrow_select::interleave::interleave(values, indices)?,
    })
}

/// The validity of the gathered rows, or `None` when no input has a null.
fn gathered_nulls(values: &[&dyn Array], indices: &[(usize, usize)]) -> Option<NullBuffer> {
    let nulls: Vec<Option<&NullBuffer>> = values.iter().map(|v| v.nulls().filter(|n| n.null_count() > 0)).collect();
    if nulls.iter().all(Option::is_none) {
        return None;
    }
    let valid = BooleanBuffer::collect_bool(indices.len(), |i| {
        let (a, r) = indices[i];
        nulls[a].is_none_or(|n| n.is_valid(r))
    });
    Some(NullBuffer::new(valid)).filter(|n| n.null_count() > 0)
}

fn interleave_struct(values: &[&dyn Array], indices: &[(usize, usize)]) -> Result<ArrayRef> {
    let structs: Vec<&StructArray> = values.iter().map(|v| downcast(*v)).collect::<Result<_>>()?;
    let fields = structs[0].fields().clone();
    let columns = (0..fields.len())
        .map(|c| {
            let children: Vec<&dyn Array> = structs.iter().map(|s| s.column(c).as_ref()).collect();
            interleave(&children, indices)
        })
        .collect::<Result<Vec<_>>>()?;
    let nulls = gathered_nulls(values, indices);
    Ok(Arc::new(StructArray::try_new_with_length(fields, columns, nulls, indices.len())?))
}

/// (input array, row) pairs: where each gathered value comes from.
type Indices = Vec<(usize, usize)>;

/// The offsets of the gathered lists and the (batch, child row) of every gathered element.
fn gather_offsets<O: OffsetSizeTrait>(
    offsets: &[&[O]],
    indices: &[(usize, usize)],
) -> Result<(OffsetBuffer<O>, Indices)> {
    let mut out = Vec::with_capacity(indices.len() + 1);
    out.push(O::usize_as(0));
    let mut children = vec![];
    for (i, &(a, r)) in indices.iter().enumerate() {
        if let Some(&(pa, pr)) = indices.get(i + AHEAD) {
            prefetch(offsets[pa].as_ptr().wrapping_add(pr).cast());
        }
        let (start, end) = (offsets[a][r].as_usize(), offsets[a][r + 1].as_usize());
        children.extend((start..end).map(|i| (a, i)));
        let total = O::from_usize(children.len())
            .ok_or_else(|| crate::Error::data(format!("list offsets overflow at {} elements", children.len())))?;
        out.push(total);
    }
    Ok((OffsetBuffer::new(out.into()), children))
}

fn interleave_list<O: OffsetSizeTrait>(values: &[&dyn Array], indices: &[(usize, usize)]) -> Result<ArrayRef> {
    let lists: Vec<&GenericListArray<O>> = values.iter().map(|v| downcast(*v)).collect::<Result<_>>()?;
    let offsets: Vec<&[O]> = lists.iter().map(|l| l.value_offsets()).collect();
    let (offsets, children) = gather_offsets(&offsets, indices)?;
    let items: Vec<&dyn Array> = lists.iter().map(|l| l.values().as_ref()).collect();
    let items = interleave(&items, &children)?;
    let (DataType::List(field) | DataType::LargeList(field)) = lists[0].data_type() else {
        return Err(crate::Error::internal("not a list"));
    };
    let nulls = gathered_nulls(values, indices);
    Ok(Arc::new(GenericListArray::<O>::try_new(field.clone(), offsets, items, nulls)?))
}

fn interleave_map(values: &[&dyn Array], indices: &[(usize, usize)]) -> Result<ArrayRef> {
    let maps: Vec<&MapArray> = values.iter().map(|v| downcast(*v)).collect::<Result<_>>()?;
    let offsets: Vec<&[i32]> = maps.iter().map(|m| m.value_offsets()).collect();
    let (offsets, children) = gather_offsets(&offsets, indices)?;
    let entries: Vec<&dyn Array> = maps.iter().map(|m| m.entries() as &dyn Array).collect();
    let entries = interleave(&entries, &children)?;
    let entries = downcast::<StructArray>(entries.as_ref())?.clone();
    let DataType::Map(field, sorted) = maps[0].data_type() else {
        return Err(crate::Error::internal("not a map"));
    };
    let nulls = gathered_nulls(values, indices);
    Ok(Arc::new(MapArray::try_new(field.clone(), offsets, entries, nulls, *sorted)?))
}

fn interleave_fixed(values: &[&dyn Array], indices: &[(usize, usize)]) -> Result<ArrayRef> {
    let arrays: Vec<&FixedSizeBinaryArray> = values.iter().map(|v| downcast(*v)).collect::<Result<_>>()?;
    let width = arrays[0].value_length() as usize;
    let mut bytes = Vec::with_capacity(indices.len() * width);
    for (i, &(a, r)) in indices.iter().enumerate() {
        if let Some(&(pa, pr)) = indices.get(i + AHEAD) {
            prefetch(arrays[pa].value_data().as_ptr().wrapping_add((arrays[pa].offset() + pr) * width));
        }
        let arr = arrays[a];
        // The slot's bytes, valid or not (a null slot's bytes are ignored by readers).
        let start = (arr.offset() + r) * width;
        bytes.extend_from_slice(&arr.value_data()[start..start + width]);
    }
    let data = arrow_data::ArrayData::builder(arrays[0].data_type().clone())
        .len(indices.len())
        .add_buffer(Buffer::from_vec(bytes))
        .nulls(gathered_nulls(values, indices))
        .build()?;
    Ok(make_array(data))
}

/// How many rows ahead the byte gather prefetches: far enough for a miss to resolve while the
/// rows before it are copied, near enough that the lines are still cached when they are used.
const AHEAD: usize = 16;

/// Asks the CPU to bring the cache line at `p` in; a hint that never faults, on any address.
#[inline(always)]
fn prefetch(p: *const u8) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: a prefetch is a hint; it reads nothing and cannot fault, whatever the address.
    unsafe {
        std::arch::x86_64::_mm_prefetch::<{ std::arch::x86_64::_MM_HINT_T0 }>(p.cast())
    }
    #[cfg(target_arch = "aarch64")]
    // SAFETY: as above: `prfm` is a hint that cannot fault and changes no register or flag.
    unsafe {
        std::arch::asm!("prfm pldl1keep, [{0}]", in(reg) p, options(nostack, readonly, preserves_flags))
    }
    #[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
    let _ = p;
}

/// Strings or binaries: the gathered offsets first (each row's byte range remembered), then the
/// bytes, each pass prefetching the row `AHEAD` rows on. Same output as arrow's interleave.
fn interleave_bytes<T: ByteArrayType>(values: &[&dyn Array], indices: &[(usize, usize)]) -> Result<ArrayRef> {
    let arrays: Vec<&GenericByteArray<T>> = values.iter().map(|v| downcast(*v)).collect::<Result<_>>()?;
    let offsets: Vec<&[T::Offset]> = arrays.iter().map(|a| a.value_offsets()).collect();
    let data: Vec<&[u8]> = arrays.iter().map(|a| a.value_data()).collect();
    let mut ranges = Vec::with_capacity(indices.len());
    let mut out = Vec::with_capacity(indices.len() + 1);
    out.push(T::Offset::usize_as(0));
    let mut total = 0usize;
    for (i, &(a, r)) in indices.iter().enumerate() {
        if let Some(&(pa, pr)) = indices.get(i + AHEAD) {
            prefetch(offsets[pa].as_ptr().wrapping_add(pr).cast());
        }
        let (start, end) = (offsets[a][r].as_usize(), offsets[a][r + 1].as_usize());
        ranges.push(start..end);
        total += end - start;
        out.push(
            T::Offset::from_usize(total)
                .ok_or_else(|| crate::Error::data(format!("byte offsets overflow at {total} bytes")))?,
        );
    }
    let mut bytes = Vec::with_capacity(total);
    for (i, (&(a, _), range)) in indices.iter().zip(&ranges).enumerate() {
        if let (Some(&(pa, _)), Some(next)) = (indices.get(i + AHEAD), ranges.get(i + AHEAD)) {
            prefetch(data[pa].as_ptr().wrapping_add(next.start));
        }
        bytes.extend_from_slice(&data[a][range.clone()]);
    }
    let nulls = gathered_nulls(values, indices);
    // Every value is a whole value of an array of this type, so a string stays valid UTF-8; the
    // check is still made (`try_new`), at a small cost, rather than taken on trust.
    Ok(Arc::new(GenericByteArray::<T>::try_new(OffsetBuffer::new(out.into()), bytes.into(), nulls)?))
}

fn downcast<T: Array + 'static>(a: &dyn Array) -> Result<&T> {
    a.as_any()
        .downcast_ref::<T>()
        .ok_or_else(|| crate::Error::internal(format!("unexpected array type {}", a.data_type())))
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use arrow_array::builder::{FixedSizeBinaryBuilder, ListBuilder, MapBuilder, StringBuilder};
    use arrow_array::{Array, ArrayRef, BinaryArray, Int32Array, LargeStringArray, RecordBatch, StructArray};
    use arrow_buffer::NullBuffer;
    use arrow_schema::{Field, Fields, Schema};

    use super::gather_rows;

    /// A batch with every nesting and leaf the gather handles itself: a uuid, a map, a list of
    /// strings, a struct holding a map, binaries and large strings, with nulls at every level.
    fn batch(seed: i32, n: usize) -> RecordBatch {
        let mut uuid = FixedSizeBinaryBuilder::new(16);
        let mut map = MapBuilder::new(None, StringBuilder::new(), StringBuilder::new());
        let mut list = ListBuilder::new(StringBuilder::new());
        let mut inner_map = MapBuilder::new(None, StringBuilder::new(), StringBuilder::new());
        let mut struct_valid = vec![];
        for i in 0..n as i32 {
            let v = seed * 1000 + i;
            if v % 7 == 3 {
                uuid.append_null();
            } else {
                uuid.append_value([(v % 251) as u8; 16]).unwrap();
            }
            for k in 0..(v % 4) {
                map.keys().append_value(format!("k{k}"));
                map.values().append_option((k != 1).then(|| format!("v{v}-{k}")));
            }
            map.append(v % 5 != 2).unwrap();
            for k in 0..(v % 3) {
                list.values().append_value(format!("t{v}{k}"));
            }
            list.append(v % 6 != 1);
            if v % 2 == 0 {
                inner_map.keys().append_value("a");
                inner_map.values().append_value(v.to_string());
            }
            inner_map.append(v % 9 != 4).unwrap();
            struct_valid.push(v % 8 != 5);
        }
        let cols: Vec<ArrayRef> = vec![
            Arc::new(uuid.finish()),
            Arc::new(map.finish()),
            Arc::new(list.finish()),
            Arc::new(inner_struct(inner_map.finish(), struct_valid)),
            Arc::new(Int32Array::from_iter((0..n as i32).map(|i| (i % 10 != 0).then_some(seed * 1000 + i)))),
            Arc::new(BinaryArray::from_iter(
                (0..n as i32).map(|i| (i % 4 != 1).then(|| vec![i as u8; (i % 9) as usize])),
            )),
            Arc::new(LargeStringArray::from_iter((0..n as i32).map(|i| (i % 5 != 3).then(|| format!("é{seed}-{i}"))))),
        ];
        let fields: Vec<Field> =
            cols.iter().enumerate().map(|(i, c)| Field::new(format!("c{i}"), c.data_type().clone(), true)).collect();
        RecordBatch::try_new(Arc::new(Schema::new(fields)), cols).unwrap()
    }

    fn inner_struct(map: arrow_array::MapArray, valid: Vec<bool>) -> StructArray {
        let field = Field::new("m", map.data_type().clone(), true);
        StructArray::try_new(Fields::from(vec![field]), vec![Arc::new(map)], Some(NullBuffer::from(valid))).unwrap()
    }

    #[test]
    fn gathers_the_same_rows_as_arrows_interleave() {
        // Sliced inputs too: offsets into the middle of buffers.
        let batches = vec![batch(1, 50), batch(2, 70).slice(5, 60), batch(3, 33)];
        let mut indices = vec![];
        for i in 0..200usize {
            let b = (i * 7) % 3;
            indices.push((b, (i * 13) % batches[b].num_rows()));
        }
        let refs: Vec<&RecordBatch> = batches.iter().collect();
        let expected = arrow_select::interleave::interleave_record_batch(&refs, &indices).unwrap();
        let got = gather_rows(&batches, &indices).unwrap();
        assert_eq!(got.num_rows(), 200);
        for c in 0..got.num_columns() {
            assert_eq!(got.column(c).to_data(), expected.column(c).to_data(), "column c{c}");
        }
        got.columns().iter().for_each(|c| c.to_data().validate_full().unwrap());
        assert_eq!(gather_rows(&batches, &[]).unwrap().num_rows(), 0);
    }
}
