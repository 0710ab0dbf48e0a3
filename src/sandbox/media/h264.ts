/**
 * A tiny H.264 (Baseline) writer: key frames made of I_PCM macroblocks (raw samples, no
 * transform) and P frames that skip every macroblock. It needs no codec library and gives
 * streams real decoders play, at the price of size, which the sandbox keeps small.
 */
import type { Raster } from "./raster.js";

class BitWriter {
  private bytes: number[] = [];
  private cur = 0;
  private n = 0;
  bit(b: number): void {
    this.cur = (this.cur << 1) | (b & 1);
    if (++this.n === 8) {
      this.bytes.push(this.cur);
      this.cur = 0;
      this.n = 0;
    }
  }
  bits(value: number, count: number): void {
    for (let i = count - 1; i >= 0; i--) this.bit((value >>> i) & 1);
  }
  ue(v: number): void {
    const x = v + 1;
    const len = Math.floor(Math.log2(x));
    this.bits(0, len);
    this.bits(x, len + 1);
  }
  se(v: number): void {
    this.ue(v <= 0 ? -2 * v : 2 * v - 1);
  }
  align(): void {
    while (this.n !== 0) this.bit(0);
  }
  byte(b: number): void {
    this.bytes.push(b & 0xff);
  }
  trailing(): void {
    this.bit(1);
    this.align();
  }
  done(): Uint8Array {
    return Uint8Array.from(this.bytes);
  }
}

/** Wraps an RBSP into a NAL unit, inserting emulation-prevention bytes. */
function nal(refIdc: number, type: number, rbsp: Uint8Array): Uint8Array {
  const out: number[] = [(refIdc << 5) | type];
  let zeros = 0;
  for (const b of rbsp) {
    if (zeros >= 2 && b <= 3) {
      out.push(3);
      zeros = 0;
    }
    out.push(b);
    zeros = b === 0 ? zeros + 1 : 0;
  }
  return Uint8Array.from(out);
}

export interface H264Stream {
  sps: Uint8Array;
  pps: Uint8Array;
  mbWidth: number;
  mbHeight: number;
  width: number;
  height: number;
}

/** Width and height must be even (4:2:0 cropping works in 2-pixel units). */
export function h264Stream(width: number, height: number): H264Stream {
  const mbWidth = Math.ceil(width / 16);
  const mbHeight = Math.ceil(height / 16);
  const w = new BitWriter();
  w.bits(66, 8); // profile_idc: Baseline
  w.bits(0b11000000, 8); // constraint_set0/1
  w.bits(30, 8); // level 3.0
  w.ue(0); // seq_parameter_set_id
  w.ue(0); // log2_max_frame_num_minus4 -> 16 frame numbers
  w.ue(2); // pic_order_cnt_type 2: output order = decode order
  w.ue(1); // max_num_ref_frames
  w.bit(0); // gaps_in_frame_num_value_allowed_flag
  w.ue(mbWidth - 1);
  w.ue(mbHeight - 1);
  w.bit(1); // frame_mbs_only_flag
  w.bit(1); // direct_8x8_inference_flag
  const cropRight = (mbWidth * 16 - width) / 2;
  const cropBottom = (mbHeight * 16 - height) / 2;
  const crop = cropRight > 0 || cropBottom > 0;
  w.bit(crop ? 1 : 0);
  if (crop) {
    w.ue(0);
    w.ue(cropRight);
    w.ue(0);
    w.ue(cropBottom);
  }
  w.bit(0); // vui_parameters_present_flag
  w.trailing();
  const p = new BitWriter();
  p.ue(0); // pic_parameter_set_id
  p.ue(0); // seq_parameter_set_id
  p.bit(0); // entropy_coding_mode_flag: CAVLC
  p.bit(0); // bottom_field_pic_order_in_frame_present_flag
  p.ue(0); // num_slice_groups_minus1
  p.ue(0); // num_ref_idx_l0_default_active_minus1
  p.ue(0); // num_ref_idx_l1_default_active_minus1
  p.bit(0); // weighted_pred_flag
  p.bits(0, 2); // weighted_bipred_idc
  p.se(0); // pic_init_qp_minus26
  p.se(0); // pic_init_qs_minus26
  p.se(0); // chroma_qp_index_offset
  p.bit(1); // deblocking_filter_control_present_flag
  p.bit(0); // constrained_intra_pred_flag
  p.bit(0); // redundant_pic_cnt_present_flag
  p.trailing();
  return { sps: nal(3, 7, w.done()), pps: nal(3, 8, p.done()), mbWidth, mbHeight, width, height };
}

const clampSample = (v: number): number => Math.min(255, Math.max(1, Math.round(v)));

/** An IDR picture whose macroblocks all carry raw (PCM) samples of the raster. */
export function idrFrame(s: H264Stream, r: Raster, idrPicId: number): Uint8Array {
  const w = new BitWriter();
  w.ue(0); // first_mb_in_slice
  w.ue(7); // slice_type: I (all slices)
  w.ue(0); // pic_parameter_set_id
  w.bits(0, 4); // frame_num
  w.ue(idrPicId % 65536);
  w.bit(0); // no_output_of_prior_pics_flag
  w.bit(0); // long_term_reference_flag
  w.se(0); // slice_qp_delta
  w.ue(1); // disable_deblocking_filter_idc: off
  const px = (x: number, y: number): [number, number, number] => {
    const cx = Math.min(x, r.width - 1);
    const cy = Math.min(y, r.height - 1);
    const o = (cy * r.width + cx) * 3;
    return [r.rgb[o] as number, r.rgb[o + 1] as number, r.rgb[o + 2] as number];
  };
  for (let my = 0; my < s.mbHeight; my++) {
    for (let mx = 0; mx < s.mbWidth; mx++) {
      w.ue(25); // mb_type I_PCM
      w.align(); // pcm_alignment_zero_bits
      for (let y = 0; y < 16; y++) {
        for (let x = 0; x < 16; x++) {
          const [R, G, B] = px(mx * 16 + x, my * 16 + y);
          w.byte(clampSample(16 + 0.257 * R + 0.504 * G + 0.098 * B));
        }
      }
      for (const plane of [0, 1]) {
        for (let y = 0; y < 8; y++) {
          for (let x = 0; x < 8; x++) {
            const [R, G, B] = px(mx * 16 + x * 2, my * 16 + y * 2);
            const v =
              plane === 0 ? 128 - 0.148 * R - 0.291 * G + 0.439 * B : 128 + 0.439 * R - 0.368 * G - 0.071 * B;
            w.byte(clampSample(v));
          }
        }
      }
    }
  }
  w.trailing();
  return nal(3, 5, w.done());
}

/** A P picture that repeats the previous one (every macroblock skipped). */
export function skipFrame(s: H264Stream, frameNum: number): Uint8Array {
  const w = new BitWriter();
  w.ue(0); // first_mb_in_slice
  w.ue(5); // slice_type: P (all slices)
  w.ue(0); // pic_parameter_set_id
  w.bits(frameNum % 16, 4);
  w.bit(0); // num_ref_idx_active_override_flag
  w.bit(0); // ref_pic_list_modification_flag_l0
  w.bit(0); // adaptive_ref_pic_marking_mode_flag (nal_ref_idc != 0)
  w.se(0); // slice_qp_delta
  w.ue(1); // disable_deblocking_filter_idc
  w.ue(s.mbWidth * s.mbHeight); // mb_skip_run: all
  w.trailing();
  return nal(2, 1, w.done());
}
