package dev.cairn.interop; public class Placeholder {}
